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
length, from ``jiwer``), and sentence accuracy (the clip's word sequence recognised exactly).

Words the recogniser's dictionary lacks cannot be recognised by any audio; PocketSphinx has no
grapheme-to-phoneme model, so they are left out of the references and of the grammar, and counted
(``unknown_words``) so that a reader sees how much was skipped.
"""

from __future__ import annotations

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


@dataclass
class Scores:
    """Recognition figures of one decode over a set of clips.

    Attributes:
        wer: Word errors (substitutions + deletions + insertions) / reference words, over all clips.
        cer: The same over characters of the space-joined word sequences.
        sentence_accuracy: Fraction of clips whose word sequence was recognised exactly.
        clips: Clips scored.
        reference_words: Words in the references (known words only).
    """

    wer: float
    cer: float
    sentence_accuracy: float
    clips: int
    reference_words: int


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
        alternatives = " | ".join(f"( {sentence} )" for sentence in sentences)
        grammar = f"#JSGF V1.0;\ngrammar corpus;\npublic <sentence> = {alternatives} ;\n"
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


@dataclass
class Clip:
    """One clip to recognise: its utterance id, its text's words and its float audio."""

    id: str
    words: list[str]
    audio: np.ndarray
    sampling_rate: int


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
    """
    references = [recognizer.known(clip.words) for clip in clips]
    if heard is None:
        heard = [_decode(recognizer, clip) for clip in clips]
    scores, hypotheses = {}, {}
    for decode in DECODES:
        words = [item[decode] for item in heard]
        scores[decode] = score(references, words)
        hypotheses[decode] = {clip.id: " ".join(w) for clip, w in zip(clips, words, strict=True)}
    return RowResult(name=name, description=description, scores=scores, hypotheses=hypotheses)


def _decode(recognizer: Recognizer, clip: Clip) -> dict[str, list[str]]:
    return {decode: recognizer.transcribe(clip.audio, clip.sampling_rate, decode) for decode in DECODES}


_worker_recognizer: Recognizer | None = None


def _start_worker(closed_set: list[list[str]]) -> None:
    global _worker_recognizer
    _worker_recognizer = Recognizer(closed_set)


def _decode_in_worker(clip: Clip) -> dict[str, list[str]]:
    assert _worker_recognizer is not None
    return _decode(_worker_recognizer, clip)


def decode_all(closed_set: Sequence[Sequence[str]], clips: Sequence[Clip], workers: int) -> list[dict[str, list[str]]]:
    """Both decodes of every clip, in order, on ``workers`` processes (PocketSphinx is single-threaded;
    each process builds its own recogniser of the same closed set). ``workers`` 1 decodes here."""
    if workers <= 1 or len(clips) < 2:
        recognizer = Recognizer(closed_set)
        return [_decode(recognizer, clip) for clip in clips]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn: the parent holds torch's thread pools, which a forked child must not inherit.
    context = multiprocessing.get_context("spawn")
    sentences = [list(words) for words in closed_set]
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(sentences,)) as pool:
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


def findings(rows: Sequence[RowResult], reference: str = "recordings") -> list[str]:
    """Plain-language findings: rows not recognisable as speech, and every neural vocoder that the
    recogniser understands less well than Griffin-Lim on the same mels (closed-set sentence accuracy,
    then WER to break ties)."""
    by_name = {row.name: row for row in rows}
    notes: list[str] = []
    base = by_name.get(reference)
    if base is not None:
        floor = NOT_SPEECH_FRACTION * base.scores["closed"].sentence_accuracy
        for row in rows:
            closed = row.scores["closed"]
            if row.name != reference and closed.sentence_accuracy <= floor:
                notes.append(
                    f"NOT SPEECH: {row.description}: the recogniser found {closed.sentence_accuracy:.0%} of the "
                    f"sentences in the closed set (recordings: {base.scores['closed'].sentence_accuracy:.0%}), "
                    f"WER {closed.wer:.0%}. A listener would not hear these words."
                )
    for neural, griffin_lim, mels in COMPARISONS:
        if neural not in by_name or griffin_lim not in by_name:
            continue
        a, b = by_name[neural].scores["closed"], by_name[griffin_lim].scores["closed"]
        if (a.sentence_accuracy, -a.wer) < (b.sentence_accuracy, -b.wer):
            notes.append(
                f"WORSE THAN GRIFFIN-LIM: {by_name[neural].description} is understood less well than Griffin-Lim "
                f"on the same {mels} (closed-set sentence accuracy {a.sentence_accuracy:.0%} against "
                f"{b.sentence_accuracy:.0%}, WER {a.wer:.0%} against {b.wer:.0%}): the neural vocoder loses "
                f"words that the mels carry."
            )
    return notes
