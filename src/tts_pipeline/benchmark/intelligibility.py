"""Intelligibility: what an off-the-shelf recogniser hears in the audio.

The recogniser is PocketSphinx with the en-US acoustic model, dictionary and language model that its
PyPI wheel ships (nothing is downloaded, and nobody on the project trained it). Each clip is decoded
twice:

- **open**: the stock trigram language model over the whole dictionary. Strict: eSpeak's voice and a
  small vocoder are far from the speech the model knows, so even the corpus recordings score poorly.
- **closed**: a JSGF grammar whose only sentences are the corpus's own (the ``closed_set``). The
  decoder must pick one of them (or stop part-way), so a clip that carries the words lands on its
  sentence, while a buzz, noise or silence lands nowhere or on a wrong one. Filler (breath, noise)
  words are left out of the grammar: with them, PocketSphinx's FSG search tends to end in a filler
  loop and return a truncated sentence even for clean recordings.

Scores per decode: word error rate and character error rate over all clips (errors / reference
length, from ``jiwer``), and sentence accuracy (the clip's word sequence recognised exactly) with its
binomial standard error over the clips. A finding that compares two rows is stated only when their gap
exceeds the error of the difference; otherwise the report says the two are within the error.

Words the recogniser's dictionary lacks cannot be recognised by any audio; PocketSphinx has no
grapheme-to-phoneme model, so they are left out of the references and of the grammar, and counted
(``unknown_words``) so that a reader sees how much was skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tts_pipeline.benchmark import other_vocoders

ASR_SAMPLING_RATE = 16000
"""The rate of PocketSphinx's en-US acoustic model; clips are resampled to it."""
WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
DECODES = ("closed", "open")


def words_of(text: str) -> list[str]:
    """The words of an already normalised text, lower case, punctuation dropped (``"It's 5."`` -> ``["it's"]``)."""
    return WORD.findall(text.lower())


def standard_error(proportion: float, n: int) -> float:
    """Binomial standard error ``sqrt(p (1 - p) / n)`` of a proportion ``p`` of ``n`` trials; NaN for no trial."""
    return math.sqrt(proportion * (1.0 - proportion) / n) if n > 0 else math.nan


def percent_with_error(proportion: float, error: float) -> str:
    """A proportion and its standard error in whole points: ``0.875, 0.0675`` -> ``"88 % ± 7"``."""
    return f"{100 * proportion:.0f} % ± {100 * error:.0f}"


@dataclass
class Scores:
    """Recognition figures of one decode over a set of clips.

    Attributes:
        wer: Word errors (substitutions + deletions + insertions) / reference words, over all clips.
        cer: The same over characters of the space-joined word sequences.
        sentence_accuracy: Fraction of clips whose word sequence was recognised exactly.
        clips: Clips scored: the ``n`` of the standard error.
        reference_words: Words in the references (known words only).
        sentence_accuracy_se: Binomial standard error of ``sentence_accuracy`` over the ``clips``.
    """

    wer: float
    cer: float
    sentence_accuracy: float
    clips: int
    reference_words: int
    # Only the sentence accuracy is a proportion of sentences, each one trial. WER and CER are pooled
    # over words and characters and are not proportions (insertions take them above 1); nor are the
    # words of one clip independent trials (one muffled clip loses them all), so a binomial error over
    # ``reference_words`` would be too small. They carry no error, and no finding compares them.
    sentence_accuracy_se: float = field(init=False)

    def __post_init__(self) -> None:
        self.sentence_accuracy_se = standard_error(self.sentence_accuracy, self.clips)


def score(references: Sequence[Sequence[str]], hypotheses: Sequence[Sequence[str]]) -> Scores:
    """WER, CER and sentence accuracy of word-sequence ``hypotheses`` against ``references``.

    References with no word are skipped (nothing to recognise); an empty hypothesis is all deletions.
    """
    import jiwer

    if len(references) != len(hypotheses):
        raise ValueError(f"score: {len(references)} references against {len(hypotheses)} hypotheses")
    pairs = [(" ".join(ref), " ".join(hyp)) for ref, hyp in zip(references, hypotheses, strict=True) if ref]
    if not pairs:
        raise ValueError("score: no reference with a word")
    refs, hyps = [p[0] for p in pairs], [p[1] for p in pairs]
    words = jiwer.process_words(refs, hyps)
    characters = jiwer.process_characters(refs, hyps)
    return Scores(
        wer=float(words.wer),
        cer=float(characters.cer),
        sentence_accuracy=sum(ref == hyp for ref, hyp in pairs) / len(pairs),
        clips=len(pairs),
        reference_words=sum(len(ref.split()) for ref in refs),
    )


class Recognizer:
    """PocketSphinx's en-US model with two searches: the stock language model and a closed set.

    Args:
        closed_set: The sentences of the closed-set grammar, each a list of words (:func:`words_of`).
            Unknown words are dropped from them; duplicates are merged.
    """

    CLOSED, OPEN = "closed", "open"

    def __init__(self, closed_set: Iterable[Sequence[str]]) -> None:
        from pocketsphinx import Decoder

        # fsgusefiller off: see the module docstring. loglevel: PocketSphinx's INFO lines are a wall of text.
        self._decoder = Decoder(loglevel="FATAL", fsgusefiller=False)
        self._decoder.add_lm_file(self.OPEN, self._decoder.config["lm"])
        sentences = sorted({" ".join(self.known(words)) for words in closed_set} - {""})
        if not sentences:
            raise ValueError("closed set: no sentence with a word the recogniser knows")
        grammar = f"#JSGF V1.0;\ngrammar corpus;\npublic <sentence> = {prefix_tree_rule(sentences)} ;\n"
        self._decoder.add_jsgf_string(self.CLOSED, grammar)
        self.closed_set_size = len(sentences)

    def knows(self, word: str) -> bool:
        """Whether the dictionary has a pronunciation of ``word``."""
        return self._decoder.lookup_word(word) is not None

    def known(self, words: Sequence[str]) -> list[str]:
        """``words`` without those the dictionary lacks."""
        return [word for word in words if self.knows(word)]

    def transcribe(self, audio: np.ndarray, sampling_rate: int, search: str) -> list[str]:
        """The words recognised in float ``(N,)`` ``audio`` by ``search`` (``"closed"`` or ``"open"``)."""
        import librosa

        if search not in (self.CLOSED, self.OPEN):
            raise ValueError(f"search: expected 'closed' or 'open', got {search!r}")
        # Non-finite samples would become arbitrary integers; a broken clip is silence to a listener.
        samples = np.nan_to_num(np.asarray(audio, dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        if sampling_rate != ASR_SAMPLING_RATE:
            samples = librosa.resample(samples, orig_sr=sampling_rate, target_sr=ASR_SAMPLING_RATE)
        pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype(np.int16)
        decoder = self._decoder
        decoder.activate_search(search)
        decoder.start_utt()
        decoder.process_raw(pcm.tobytes(), no_search=False, full_utt=True)
        decoder.end_utt()
        hypothesis = decoder.hyp()
        return words_of(hypothesis.hypstr) if hypothesis is not None else []


def prefix_tree_rule(sentences: Sequence[str]) -> str:
    """A JSGF rule expansion that accepts exactly ``sentences`` (each space-separated words), with their
    common prefixes shared: ``["a b", "a c", "d"]`` -> ``( a ( b | c ) | d )``.

    The same language as one alternative per sentence, and the same decodes, in three quarters of the
    time: PocketSphinx's grammar search keeps one word model per grammar word alive, and the sentences
    of a corpus share their first words ("the", "is", ...)."""
    tree: dict[str, dict] = {}
    for sentence in sentences:
        node = tree
        for word in sentence.split():
            node = node.setdefault(word, {})
        node[""] = {}  # a sentence may end here

    def expansion(node: dict[str, dict]) -> str:
        branches = []
        for word, child in sorted(node.items()):
            if word == "":
                branches.append("<NULL>")
            elif list(child) == [""]:
                branches.append(word)
            else:
                branches.append(f"{word} {expansion(child)}")
        return branches[0] if len(branches) == 1 else "( " + " | ".join(branches) + " )"

    if not any(sentence.split() for sentence in sentences):
        raise ValueError("prefix_tree_rule: no sentence with a word")
    return expansion(tree)


@dataclass
class Clip:
    """One clip to recognise: its utterance id, its text's words, its float audio and the decodes it gets
    (the open decode costs about five closed ones, so a benchmark may give it to the first clips only)."""

    id: str
    words: list[str]
    audio: np.ndarray
    sampling_rate: int
    decodes: tuple[str, ...] = DECODES


@dataclass
class RowResult:
    """One row of the intelligibility table: a kind of audio over the same clips.

    Attributes:
        name: Short key (``recordings``, ``griffin_lim_ground_truth``, ...).
        description: What the audio is, for a reader.
        scores: Per decode (``closed``, ``open``), its :class:`Scores`.
        hypotheses: Per decode, per clip id, the recognised words.
    """

    name: str
    description: str
    scores: dict[str, Scores]
    hypotheses: dict[str, dict[str, str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            **{decode: vars(scores) for decode, scores in self.scores.items()},
            "hypotheses": self.hypotheses,
        }


def recognise(
    recognizer: Recognizer,
    name: str,
    description: str,
    clips: Sequence[Clip],
    heard: Sequence[dict[str, list[str]]] | None = None,
) -> RowResult:
    """Score every clip's decodes against the clips' known words.

    Args:
        heard: Per clip, per decode, the recognised words, when already decoded (:func:`decode_all`);
            None = decode here with ``recognizer``.

    Each decode is scored over the clips that had it (:attr:`Clip.decodes`); one that none had is left out.
    """
    references = [recognizer.known(clip.words) for clip in clips]
    if heard is None:
        heard = [_decode(recognizer, clip) for clip in clips]
    scores, hypotheses = {}, {}
    for decode in DECODES:
        had = [(clip, reference, item[decode]) for clip, reference, item in zip(clips, references, heard, strict=True)
               if decode in item]  # fmt: skip
        if not had:
            continue
        scores[decode] = score([reference for _, reference, _ in had], [words for _, _, words in had])
        hypotheses[decode] = {clip.id: " ".join(words) for clip, _, words in had}
    return RowResult(name=name, description=description, scores=scores, hypotheses=hypotheses)


def _decode(recognizer: Recognizer, clip: Clip) -> dict[str, list[str]]:
    return {decode: recognizer.transcribe(clip.audio, clip.sampling_rate, decode) for decode in clip.decodes}


_worker_recognizer: Recognizer | None = None


def _start_worker(closed_set: list[list[str]]) -> None:
    global _worker_recognizer
    _worker_recognizer = Recognizer(closed_set)


def _decode_in_worker(clip: Clip) -> dict[str, list[str]]:
    assert _worker_recognizer is not None
    return _decode(_worker_recognizer, clip)


def decode_all(closed_set: Sequence[Sequence[str]], clips: Sequence[Clip], workers: int) -> list[dict[str, list[str]]]:
    """Both decodes of every clip, in order, on ``workers`` processes (PocketSphinx is single-threaded;
    each process builds its own recogniser of the same closed set). ``workers`` 1, or too few clips to be
    worth a pool, decode here."""
    from tts_pipeline.process_pool import process_pool, worth_a_pool

    if not worth_a_pool(len(clips), workers):
        recognizer = Recognizer(closed_set)
        return [_decode(recognizer, clip) for clip in clips]

    sentences = [list(words) for words in closed_set]
    with process_pool(workers, initializer=_start_worker, initargs=(sentences,)) as pool:
        return list(pool.map(_decode_in_worker, clips, chunksize=max(1, len(clips) // (4 * workers))))


def unknown_words(recognizer: Recognizer, texts: Iterable[Sequence[str]]) -> list[str]:
    """The words of ``texts`` (each a word list) that the recogniser's dictionary lacks, each occurrence."""
    return [word for words in texts for word in words if not recognizer.knows(word)]


# --------------------------------------------------------------------------------------------------
# what the figures say, in words
# --------------------------------------------------------------------------------------------------

NOT_SPEECH_FRACTION = 0.25
"""A row whose closed-set sentence accuracy is below this fraction of the recordings' is called
not recognisable as speech: with a closed set the decoder picks among the corpus's sentences, so even
poor speech lands on its sentence far more often than that."""

COMPARISONS = (
    # (neural row, Griffin-Lim row on the same mels, what the mels are)
    ("hifigan_base_ground_truth", "griffin_lim_ground_truth", "ground-truth mels"),
    ("hifigan_fine_tuned_ground_truth", "griffin_lim_ground_truth", "ground-truth mels"),
    ("tts", "griffin_lim_fastpitch", "FastPitch mels"),
    *other_vocoders.comparisons(),
)


@dataclass(frozen=True)
class Estimate:
    """A closed-set sentence accuracy (or a multiple of one) and its standard error."""

    value: float
    error: float

    @classmethod
    def closed_set(cls, row: RowResult, scale: float = 1.0) -> Estimate:
        """``scale`` times ``row``'s closed-set sentence accuracy; the error scales with it."""
        closed = row.scores["closed"]
        return cls(scale * closed.sentence_accuracy, scale * closed.sentence_accuracy_se)

    def __str__(self) -> str:
        return percent_with_error(self.value, self.error)


def gap_below(lower: Estimate, upper: Estimate) -> tuple[float, float, bool]:
    """How far ``lower`` lies below ``upper``, the standard error of that difference, and whether the
    gap exceeds it.

    The errors add in quadrature as if the two were independent. Both rows are scored on the same
    sentences, and a sentence hard for one row tends to be hard for the other, so the true error of
    the difference is at most this: a gap beyond it is not the luck of which sentences were drawn.
    """
    gap = upper.value - lower.value
    error = math.hypot(lower.error, upper.error)
    return gap, error, gap > error


def within_error(subject: str, against: str, gap: float, error: float, n: int) -> str:
    """The finding for a gap no larger than its error: the two figures, the gap and the error."""
    return (
        f"WITHIN THE ERROR: {subject} vs {against} ({n} sentences, closed set): the gap, {100 * gap:.0f} "
        f"points, is within the error of the difference, {100 * error:.0f}; at this number of sentences "
        "the two are indistinguishable."
    )


def findings(rows: Sequence[RowResult], reference: str = "recordings") -> list[str]:
    """Plain-language findings on the closed-set sentence accuracy: rows not recognisable as speech
    (:func:`not_speech`), then every neural vocoder that the recogniser understands less well than
    Griffin-Lim on the same mels (:func:`against_griffin_lim`). Each is stated only where the gap
    exceeds the error of the difference; a smaller gap is reported as within the error."""
    by_name = {row.name: row for row in rows}
    notes: list[str] = []
    if reference in by_name:
        notes += not_speech(rows, by_name[reference])
    for neural, griffin_lim, mels in COMPARISONS:
        if neural in by_name and griffin_lim in by_name:
            notes += against_griffin_lim(by_name[neural], by_name[griffin_lim], mels)
    return notes


def not_speech(rows: Sequence[RowResult], base: RowResult) -> list[str]:
    """Rows at or below :data:`NOT_SPEECH_FRACTION` of ``base``'s (the recordings') closed-set sentence
    accuracy: NOT SPEECH where the gap exceeds its error, within the error otherwise."""
    recordings = Estimate.closed_set(base)
    n = base.scores["closed"].clips
    if recordings.value == 0.0:
        # No line to fall below: a recogniser that misses every recording says nothing about the rows.
        return [
            f"NOTHING RECOGNISED: the recogniser found none of the {n} sentences in the recordings (closed "
            "set), so no row can be judged against them."
        ]
    line = Estimate.closed_set(base, NOT_SPEECH_FRACTION)
    line_text = f"the not-speech line, {line} ({100 * NOT_SPEECH_FRACTION:.0f} % of the recordings' {recordings})"
    notes = []
    for row in rows:
        closed = Estimate.closed_set(row)
        if row is base or closed.value > line.value:
            continue
        gap, error, beyond = gap_below(closed, line)
        if beyond:
            notes.append(
                f"NOT SPEECH: {row.description}: the recogniser found {closed} of the sentences in the closed "
                f"set, {100 * gap:.0f} points below {line_text}, beyond the error of {100 * error:.0f} "
                f"({n} sentences); WER {row.scores['closed'].wer:.0%}. A listener would not hear these words."
            )
        else:
            notes.append(within_error(f"{row.description} {closed}", line_text, gap, error, n))
    return notes


def against_griffin_lim(neural: RowResult, griffin_lim: RowResult, mels: str) -> list[str]:
    """WORSE THAN GRIFFIN-LIM where ``neural`` is below ``griffin_lim`` (on the same ``mels``) by more than
    the error of the difference, within the error where it is below by less; nothing where it is not
    below."""
    a, b = Estimate.closed_set(neural), Estimate.closed_set(griffin_lim)
    if a.value >= b.value:
        return []
    gap, error, beyond = gap_below(a, b)
    n = neural.scores["closed"].clips
    if not beyond:
        return [within_error(f"{neural.description} {a}", f"Griffin-Lim on the same {mels} {b}", gap, error, n)]
    return [
        f"WORSE THAN GRIFFIN-LIM: {neural.description} is understood less well than Griffin-Lim on the "
        f"same {mels}: closed-set sentences {a} against {b} ({n} sentences), a gap of {100 * gap:.0f} points, "
        f"beyond the error of the difference, {100 * error:.0f}. The neural vocoder loses words that the "
        "mels carry."
    ]
