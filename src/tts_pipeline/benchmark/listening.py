"""The benchmark's listening test: the same held-out sentences as six kinds of audio, each recognised by
PocketSphinx (:mod:`tts_pipeline.benchmark.intelligibility`), drawn as spectrograms side by side and
written as WAVs.

The rows, from the upper reference point to what a user gets:

========================================  ==========================================================
``recordings``                            the corpus recordings: the best any row can do
``griffin_lim_ground_truth``              Griffin-Lim on the ground-truth mels: what the mels carry,
                                          inverted without a neural vocoder
``hifigan_base_ground_truth``             the base HiFi-GAN on the ground-truth mels (copy synthesis)
``hifigan_fine_tuned_ground_truth``       the fine-tuned HiFi-GAN on the ground-truth mels
``griffin_lim_fastpitch``                 Griffin-Lim on FastPitch's free-running mels of the texts
``tts``                                   FastPitch + fine-tuned HiFi-GAN from the texts, as
                                          ``synthesize`` makes them (the ``inference`` section, its
                                          precision included: what a user gets)
``<vocoder>_ground_truth``                each other vocoder in the DAG (e.g. ``waveglow``) on the
                                          ground-truth mels (:mod:`.other_vocoders`)
``tts_<vocoder>``                         FastPitch + that vocoder from the texts
``tts_<acoustic model>[_<vocoder>]``      each other acoustic model in the DAG (e.g. ``tacotron2``)
                                          from the texts, with the fine-tuned HiFi-GAN or another
                                          vocoder (:mod:`.other_acoustic_models`)
``tts_speaker_<name>``                    for a multi-speaker FastPitch only: FastPitch as each of its
                                          speakers + the synthesis vocoder, with the ``tts`` row's
                                          options (:func:`speaker_row`); ``tts`` is one voice,
                                          ``inference.speaker``'s, and these judge every voice
========================================  ==========================================================

Every neural row runs at ``inference.amp``, as the product does (with ``auto`` on a CPU, the fastest path
whose output holds; the speed table times each precision, the precision table compares them with fp32).

A neural row below its Griffin-Lim row on the same mels, by more than the error of the difference, means
the vocoder loses what the mels carry; a row far below the recordings in the closed set is not speech
(:func:`intelligibility.findings`).

The same audio gives the pause table (:mod:`tts_pipeline.benchmark.pauses`): each row's level in the
pauses of the mel it speaks, relative to its speech, and its noise floor; a vocoder row whose pauses are
not quiet is flagged, the recordings and Griffin-Lim rows are its reference points. It gives the pitch
table too (:mod:`tts_pipeline.benchmark.pitch_fidelity`): how closely each row made from the ground-truth
mels follows the recording's F0, and how much of every row's voice is locked to the frame rate (a buzz).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts_pipeline.audio import MelSpectrogram, griffin_lim, load_wav
from tts_pipeline.benchmark import other_acoustic_models, other_vocoders, pauses, pitch_fidelity
from tts_pipeline.benchmark.intelligibility import (
    DECODES,
    Clip,
    Recognizer,
    decode_all,
    findings,
    percent_with_error,
    recognise,
    unknown_words,
    words_of,
)
from tts_pipeline.config import AudioConfig, model_kinds
from tts_pipeline.inference.synthesizer import Synthesizer
from tts_pipeline.process_pool import process_pool, worth_a_pool

log = logging.getLogger(__name__)

ROW_DESCRIPTIONS = {
    "recordings": "Recordings (the corpus)",
    "griffin_lim_ground_truth": "Griffin-Lim on ground-truth mels",
    "hifigan_base_ground_truth": "Base HiFi-GAN on ground-truth mels (copy synthesis)",
    "hifigan_fine_tuned_ground_truth": "Fine-tuned HiFi-GAN on ground-truth mels (copy synthesis)",
    "griffin_lim_fastpitch": "Griffin-Lim on FastPitch mels (from text)",
    "tts": "FastPitch + fine-tuned HiFi-GAN (full TTS)",
    **other_vocoders.row_descriptions(),
    **other_acoustic_models.row_descriptions(),
}


def row_description(name: str) -> str:
    """The table's words for row ``name``."""
    return ROW_DESCRIPTIONS[name]


SPEAKER_ROW_PREFIX = "tts_speaker_"


def speaker_row(speaker: str) -> str:
    """The full-TTS row of speaker ``speaker`` of a multi-speaker FastPitch (``tts_speaker_<name>``)."""
    return SPEAKER_ROW_PREFIX + speaker


def describer(tts: Mapping[str, Synthesizer]) -> Callable[[str], str]:
    """The table's words for every row of a run: :func:`row_description`, and for each speaker's row
    (:func:`speaker_row`) FastPitch + the vocoder its synthesizer speaks through, as that speaker.
    Speaker rows are named at run time (the model's speakers), so their words come from ``tts``."""

    def describe(name: str) -> str:
        if not name.startswith(SPEAKER_ROW_PREFIX):
            return row_description(name)
        kind = tts[name].vocoder_kind
        vocoder = model_kinds.vocoder_kind(kind).label
        if kind == model_kinds.PIPELINE_VOCODER:
            vocoder = f"fine-tuned {vocoder}"
        return f"FastPitch + {vocoder} (full TTS, speaker {name.removeprefix(SPEAKER_ROW_PREFIX)})"

    return describe


REFERENCE_ROWS = ("recordings", "griffin_lim_ground_truth", "griffin_lim_fastpitch")
"""The rows no vocoder under test made: the pause table shows them for comparison and flags none of them."""

FIGURE_ROWS = (
    "recordings",
    "griffin_lim_ground_truth",
    "hifigan_fine_tuned_ground_truth",
    "tts",
    *other_vocoders.figure_rows(),
    *other_acoustic_models.figure_rows(),
)
"""The panels of each spectrogram figure: the recording, the mels' own content, the vocoder, the product;
then each other vocoder's copy synthesis and full TTS when the run builds it (rows absent are skipped);
then each speaker's row of a multi-speaker FastPitch (:func:`speaker_row`)."""


@dataclass
class Utterance:
    """A held-out utterance: id, normalised text, recording path and ground-truth mel path."""

    id: str
    text: str
    wav: Path
    mel: Path


@dataclass
class ListeningResult:
    """What the listening test produced: the report section, the pause table's rows
    (:func:`tts_pipeline.benchmark.pauses.rows_of`), the pitch table's rows
    (:func:`tts_pipeline.benchmark.pitch_fidelity.rows_of`) and the files it wrote."""

    section: dict[str, Any]
    pauses: list[dict[str, Any]]
    pitch: list[dict[str, Any]]
    figures: list[Path]
    wavs: list[Path]


@dataclass
class RowAudio:
    """Every row's audio and the mels it speaks, by row name, per utterance in order.

    Attributes:
        audio: Float ``(N,)`` waveforms.
        mels: The ``(n_mels, T)`` log-mels they speak, ``T == N // hop``: the ground-truth mels for the
            recordings (their own mels), Griffin-Lim and copy synthesis; FastPitch's mels for
            Griffin-Lim on FastPitch mels and each full-TTS row.
    """

    audio: dict[str, list[np.ndarray]]
    mels: dict[str, list[np.ndarray]]


def row_audio(
    utterances: Sequence[Utterance],
    audio_cfg: AudioConfig,
    tts: dict[str, Synthesizer],
    vocoders: dict[str, Synthesizer],
    workers: int = 1,
) -> RowAudio:
    """The audio of every row (:data:`ROW_DESCRIPTIONS`) for every utterance, and the mels it speaks.

    Args:
        tts: FastPitch + a vocoder, with the ``inference`` section's options, by row: ``"tts"`` with the
            fine-tuned HiFi-GAN (required; Griffin-Lim on FastPitch mels uses its mels), then one per other
            vocoder (:mod:`.other_vocoders`), per other acoustic model and, for a multi-speaker FastPitch,
            per speaker (:func:`speaker_row`).
        vocoders: ``"base"`` and ``"fine_tuned"`` HiFi-GAN synthesizers for copy synthesis (no denoiser, no
            fade), and one per other vocoder the benchmark has, by kind (:mod:`.other_vocoders`).
        workers: Processes that run Griffin-Lim at once.
    """
    rate = audio_cfg.sampling_rate
    mels = [np.load(u.mel, allow_pickle=False).astype(np.float32) for u in utterances]
    audio: dict[str, list[np.ndarray]] = {
        "recordings": [load_wav(u.wav, rate, audio_cfg.max_wav_value) for u in utterances],
        "griffin_lim_ground_truth": griffin_lim_all(mels, audio_cfg, workers),
    }
    for name in ("base", "fine_tuned"):
        if name in vocoders:
            audio[f"hifigan_{name}_ground_truth"] = [u.audio for u in vocoders[name].vocode(mels)]
    for kind in other_vocoders.other_kinds():
        if kind.name in vocoders:
            audio[other_vocoders.ground_truth_row(kind)] = [u.audio for u in vocoders[kind.name].vocode(mels)]
    row_mels = dict.fromkeys(audio, mels)
    texts = [u.text for u in utterances]
    spoken = {name: synth.synthesize(texts) for name, synth in tts.items()}
    audio["griffin_lim_fastpitch"] = griffin_lim_all([u.mel for u in spoken["tts"]], audio_cfg, workers)
    row_mels["griffin_lim_fastpitch"] = [u.mel for u in spoken["tts"]]
    for name, said in spoken.items():
        audio[name] = [u.audio for u in said]
        row_mels[name] = [u.mel for u in said]
    return RowAudio(audio, row_mels)


def griffin_lim_all(mels: Sequence[np.ndarray], audio_cfg: AudioConfig, workers: int) -> list[np.ndarray]:
    """:func:`tts_pipeline.audio.griffin_lim` of each ``(n_mels, T)`` mel, in order, on ``workers``
    processes (its FFTs hold the interpreter: threads would not overlap); ``workers`` 1, or too few mels
    to be worth a pool (:func:`worth_a_pool`), run here."""
    if not worth_a_pool(len(mels), workers):
        return [griffin_lim(mel, audio_cfg) for mel in mels]
    from functools import partial

    with process_pool(workers) as pool:
        chunk = max(1, len(mels) // (4 * workers))
        return list(pool.map(partial(griffin_lim, cfg=audio_cfg), mels, chunksize=chunk))


def listening_test(
    utterances: Sequence[Utterance],
    closed_set: Sequence[str],
    audio_cfg: AudioConfig,
    tts: dict[str, Synthesizer],
    vocoders: dict[str, Synthesizer],
    out_dir: Path,
    n_figures: int,
    workers: int = 1,
    recognise_rows: bool = True,
    open_clips: int | None = None,
) -> ListeningResult:
    """Recognise every row, draw ``n_figures`` spectrogram figures and write their WAVs under ``out_dir``.

    Args:
        utterances: The held-out sentences (validation, then test).
        closed_set: The corpus's sentences (normalised texts) for the closed-set grammar.
        workers: Processes that decode at once (the recogniser is single-threaded).
        recognise_rows: False leaves the recogniser out (it is never imported): the section then has no
            rows, and says so; the pauses, figures and WAVs are the same.
        open_clips: The first this many utterances also get the open-vocabulary decode (about five
            closed decodes' time each); None = all of them.
    """
    from tts_pipeline.inference.postprocess import write_wav
    from tts_pipeline.plots import save_figure, spectrogram_panels

    rows_audio = row_audio(utterances, audio_cfg, tts, vocoders, workers)
    audio = rows_audio.audio
    describe = describer(tts)
    # The words as the text front end spells them out ("2" -> "two"): what a listener should hear.
    encoder = tts["tts"].text_encoder
    assert encoder is not None, "listening_test needs a synthesizer with FastPitch"
    clean = encoder.clean
    rate = audio_cfg.sampling_rate
    if recognise_rows:
        recognised = _recognise_rows(utterances, closed_set, clean, audio, rate, workers, open_clips, describe)
    else:
        recognised = {"recogniser": "not run (benchmark.recognise: false)", "decodes": {}, "unknown_words": [],
                      "rows": [], "findings": []}  # fmt: skip

    figures, wavs, examples = [], [], []
    mel = MelSpectrogram(audio_cfg)
    figure_rows = (*FIGURE_ROWS, *(name for name in tts if name.startswith(SPEAKER_ROW_PREFIX)))
    for index, utterance in enumerate(utterances[:n_figures]):
        panels, example_wavs = {}, {}
        for name in figure_rows:
            if name not in audio:
                continue
            clip = audio[name][index]
            path = write_wav(out_dir / "audio" / f"{utterance.id}_{name}.wav", clip, rate)
            wavs.append(path)
            example_wavs[name] = str(path)
            with torch.no_grad():
                panels[describe(name)] = mel(torch.from_numpy(np.ascontiguousarray(clip))).numpy()
        figure = spectrogram_panels(panels, audio_cfg.hop_length / rate, title=f"{utterance.id}: {utterance.text}")
        figures.append(save_figure(figure, out_dir / "figures" / f"{utterance.id}_spectrograms.png"))
        examples.append({"id": utterance.id, "text": utterance.text, "figure": str(figures[-1]), "wavs": example_wavs})

    section = {
        "recognised": recognise_rows,
        **recognised,
        "utterance_ids": [u.id for u in utterances],
        "examples": examples,
    }
    ids = [u.id for u in utterances]
    pause_rows = pauses.rows_of(ids, audio, rows_audio.mels, describe, REFERENCE_ROWS, audio_cfg)
    pitch_rows = pitch_fidelity.rows_of(ids, audio, describe, REFERENCE_ROWS, audio_cfg)
    return ListeningResult(section=section, pauses=pause_rows, pitch=pitch_rows, figures=figures, wavs=wavs)


def _open_decode(n_open: int, n_clips: int) -> str:
    """What the open decode was, for the report."""
    if n_open == 0:
        return "not run (benchmark.open_decode_clips: 0)"
    which = "" if n_open == n_clips else f", on the first {n_open} of the {n_clips} sentences"
    return f"the stock trigram language model (open vocabulary){which}"


def _recognise_rows(
    utterances: Sequence[Utterance],
    closed_set: Sequence[str],
    clean: Callable[[str], str],
    audio: dict[str, list[np.ndarray]],
    rate: int,
    workers: int,
    open_clips: int | None,
    describe: Callable[[str], str],
) -> dict[str, Any]:
    """The closed decode of every row's clips and the open one of the first ``open_clips`` (None = all):
    the section's recogniser, decodes, unknown words, rows, findings (``describe``: each row's words)."""
    sentences = [words_of(clean(text)) for text in closed_set]
    recognizer = Recognizer(sentences)
    references = [words_of(clean(u.text)) for u in utterances]
    n_open = len(utterances) if open_clips is None else min(open_clips, len(utterances))
    decodes = [DECODES if index < n_open else ("closed",) for index in range(len(utterances))]
    clips_of = {
        name: [Clip(u.id, words, a, rate, which)
               for u, words, a, which in zip(utterances, references, clips_audio, decodes, strict=True)]
        for name, clips_audio in audio.items()
    }  # fmt: skip
    heard = iter(decode_all(sentences, [clip for clips in clips_of.values() for clip in clips], workers))
    rows = []
    for name, clips in clips_of.items():
        row = recognise(recognizer, name, describe(name), clips, [next(heard) for _ in clips])
        closed, open_ = row.scores["closed"], row.scores.get("open")
        log.info(
            "benchmark: %s: closed-set sentence accuracy %s, WER %.1f%%, CER %.1f%%; open WER %s",
            row.description, percent_with_error(closed.sentence_accuracy, closed.sentence_accuracy_se),
            100 * closed.wer, 100 * closed.cer, "-" if open_ is None else f"{100 * open_.wer:.1f}%",
        )  # fmt: skip
        rows.append(row)
    return {
        "recogniser": "PocketSphinx en-US (acoustic model, dictionary and trigram LM of the pocketsphinx wheel)",
        "decodes": {
            "closed": f"JSGF grammar of the corpus's {recognizer.closed_set_size} distinct sentences",
            "open": _open_decode(n_open, len(utterances)),
        },
        "unknown_words": unknown_words(recognizer, references),
        "rows": [row.as_dict() for row in rows],
        "findings": findings(rows),
    }
