"""Synthesise a phrase file with the acoustic model of ``inference.acoustic_model`` (the trained FastPitch,
or Tacotron 2) and the vocoder of ``inference.vocoder``: one WAV per phrase, and a manifest.

``--acoustic-model`` (also spelt ``--fastpitch``) is that acoustic model's file: FastPitch's, or
Tacotron 2's (NVIDIA's Tacotron 2 + WaveGlow system: each text decoded until its stop gate fires; a
phrase cut at ``inference.tacotron2_max_decoder_steps`` instead is named in a warning and its manifest
record says ``"complete": false``).

``--vocoder`` is the model file of the vocoder kind ``inference.vocoder`` names (a row of
:mod:`tts_pipeline.config.model_kinds`: the fine-tuned HiFi-GAN, or WaveGlow with weight norms folded and
noise scale ``inference.waveglow_sigma``). Every vocoder's time is reported in the same ``vocoder_ms``
field, and each manifest record names its ``vocoder`` kind.

``--phrases`` is a ``name|text`` file (or NVIDIA's ``.tsv`` with ``output`` and ``text`` columns; see
``tts_pipeline.inference.phrases``). Each text is encoded as the FastPitch model was trained, the texts
are sorted by length and synthesised ``inference.batch_size`` at a time (pace and pitch transforms of
the ``inference`` section; a text longer than about 200 symbols is split at sentence ends, then
commas, then spaces, and its pieces joined with a short pause; one over the phrase limit is refused,
naming its line), vocoded, denoised (``inference.denoising_strength``), cropped to
``frames x hop`` and faded out over the last ``inference.fade_out_frames`` frames. With ``--mels`` a
folder of ground-truth ``<id>.npy`` mels ``(n_mels, T)`` is vocoded instead (vocoder-only; no FastPitch).

Writes, atomically, ``<out-dir>/<name>.wav`` (mono 16-bit PCM at the models' sampling rate, at the
level the vocoder produced unless ``inference.normalize_peak``), each batch's as soon as it is done, so
that memory stays flat however long the phrase file (no audio is kept; texts are sorted by length a
window of batches at a time, :meth:`Synthesizer.stream_pieces`), and, last, ``--manifest`` (JSON lines:
``name``, ``wav``, ``text``, ``n_tokens``, ``n_frames``, ``seconds``, and the batch's ``batch``,
``batch_size``, ``fastpitch_ms`` and ``vocoder_ms``, timed with the device synchronised; the denoiser
counts as vocoder time). The two models, and the config's ``audio`` section, must agree on sampling
rate, hop and mel channels. Runs on the first visible GPU (``inference.gpus`` 1; fp16/bf16 autocast
with ``inference.amp``) or on the CPU in fp32. Under tracking, the WAVs and the manifest go to MLflow,
whose UI plays them. A phrase in another script than Latin (Arabic, Hebrew, CJK, ...) or with bidi
marks is transliterated to ASCII as the model was trained; a warning names its file:line
(:mod:`tts_pipeline.inference.scripts`).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

if TYPE_CHECKING:
    import numpy as np

    from tts_pipeline.inference import Synthesizer

log = logging.getLogger(__name__)

STAGE = "synthesize"
MANIFEST_NAME = "manifest.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser)
    parser.add_argument(
        "--acoustic-model",
        "--fastpitch",
        dest="acoustic_model",
        type=Path,
        default=None,
        help="the acoustic model's model.pt (or a foreign checkpoint), of the kind inference.acoustic_model names "
        "(required with --phrases)",
    )
    parser.add_argument(
        "--vocoder",
        type=Path,
        required=True,
        help="the vocoder's model.pt (or a foreign checkpoint), of the kind inference.vocoder names",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--phrases", type=Path, help="phrase file: name|text lines, a .tsv (output, text), or a manifest .jsonl"
    )
    source.add_argument("--mels", type=Path, help="vocoder only: a folder of <id>.npy mels (n_mels, T) to vocode")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder for <name>.wav")
    parser.add_argument("--manifest", type=Path, default=None, help=f"default <out-dir>/{MANIFEST_NAME}; written last")
    parser.add_argument("--gpus", type=int, default=None, help="0 = CPU, 1 = first visible GPU; default inference.gpus")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, TextConfig, parse_section
    from tts_pipeline.config.model_kinds import acoustic_model_kind, vocoder_kind
    from tts_pipeline.devices import single_device
    from tts_pipeline.errors import UserError
    from tts_pipeline.inference import InferenceConfig, SynthesisOptions, Synthesizer

    payload = load_stage_section(args, "synthesize")
    cfg: InferenceConfig = parse_section(InferenceConfig, payload["inference"], "inference")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    text: TextConfig = parse_section(TextConfig, payload["text"], "text")
    if args.phrases is not None and args.acoustic_model is None:
        raise UserError("synthesize: --phrases needs --acoustic-model (or vocode ground-truth mels with --mels)")
    if args.mels is not None and args.acoustic_model is not None:
        log.info("synthesize: --mels vocodes ground-truth mels; --acoustic-model %s is not used", args.acoustic_model)
    manifest = args.manifest or args.out_dir / MANIFEST_NAME
    device = single_device(cfg.gpus if args.gpus is None else args.gpus, "inference.gpus")
    vocoder = cfg.vocoder
    acoustic = acoustic_model_kind(cfg.acoustic_model)
    synth = Synthesizer.load(
        args.acoustic_model if args.phrases is not None else None,
        args.vocoder,
        SynthesisOptions.from_config(cfg),
        acoustic_model_kind=acoustic.name,
        vocoder_kind=vocoder,
        audio=audio,
        text=text,
        device=device,
        amp=cfg.amp,
    )
    tags = {
        "device": str(device),
        "amp": synth.precision.amp,
        "mode": "text" if args.phrases else "mels",
        "vocoder": vocoder,
        **({"acoustic_model": acoustic.name} if args.phrases is not None else {}),
    }
    with tracked(STAGE, payload, dataset=args.out_dir.resolve().parent.name, tags=tags) as run_log:
        if args.phrases is not None:
            records = _synthesize_phrases(synth, args.phrases, args.out_dir, cfg.n_val_phrases)
        else:
            records = _vocode_mels(synth, args.mels, args.out_dir)
        from tts_pipeline.files import write_jsonl

        # Each batch's WAVs are written as soon as it is done and its audio let go; only the records
        # (a few hundred bytes each) reach the manifest, which still appears last, whole.
        totals = SynthesisTotals()
        write_jsonl(manifest, totals.count({**record, "vocoder": vocoder} for record in records))
        summary = totals.summary()
        log.info(
            "synthesize: %d utterances, %.2f s of audio in %.3f s (%s %.3f s, %s %.3f s) on %s, "
            "%.1fx real time; wrote %s",
            summary["n_utterances"],
            summary["audio_seconds"],
            summary["compute_seconds"],
            acoustic.label,
            summary["fastpitch_seconds"],
            vocoder_kind(vocoder).label,
            summary["vocoder_seconds"],
            device,
            summary["x_real_time"],
            manifest,
        )
        run_log.log_metrics(summary)
        for wav in totals.wavs:
            run_log.log_artifact(args.out_dir / wav, "audio")
        run_log.log_artifact(manifest)


def _synthesize_phrases(synth: Synthesizer, path: Path, out_dir: Path, n_manifest: int) -> Iterator[dict[str, Any]]:
    """Encode every phrase (errors name the file and line; long ones in pieces, over-long ones refused
    before any model runs; a warning names the lines whose script was transliterated), then synthesise,
    writing each WAV as soon as its batch is done; the manifest records, in phrase order.

    A pipeline manifest (``.jsonl``) as phrase file gives its first ``n_manifest`` utterances."""
    from array import array

    from tts_pipeline.errors import UserError
    from tts_pipeline.inference import read_phrases
    from tts_pipeline.inference.scripts import transliteration_warning

    phrases = read_phrases(path, limit=n_manifest if path.suffix.lower() == ".jsonl" else None)
    pieces = []
    for phrase in phrases:
        try:
            # symbol ids as 4-byte integers: a long phrase file's ids stay a small part of memory
            pieces.append([array("i", piece) for piece in synth.encode_pieces(phrase.text)])
        except UserError as error:
            raise UserError(f"{path}:{phrase.line}: phrase {phrase.name!r}: {error}") from None
    warning = transliteration_warning(path, phrases, synth.text_encoder.clean if synth.text_encoder else None)
    if warning:
        log.warning("synthesize: %s", warning)
    synth.warm_up()

    def write(utterance: Any) -> tuple[int, dict[str, Any]]:
        phrase = phrases[utterance.index]
        if not utterance.complete:
            log.warning(
                "synthesize: %s:%d: phrase %r was cut at %d frames: the acoustic model's stop gate never "
                "fired (raise inference.tacotron2_max_decoder_steps if the text is that long; otherwise the "
                "model did not learn to stop on it)",
                path, phrase.line, phrase.name, utterance.n_frames,
            )  # fmt: skip
        fields = {"text": phrase.text, **_fields(utterance)}
        return utterance.index, _write(synth, out_dir, phrase.name, utterance.audio, fields)

    return in_input_order(write(utterance) for utterance in synth.stream_pieces(pieces))


def in_input_order(items: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """``(index, record)`` pairs arriving in any order -> the records in index order (0, 1, 2, ...),
    each as soon as every record before it has arrived."""
    pending: dict[int, dict[str, Any]] = {}
    expected = 0
    for index, record in items:
        pending[index] = record
        while expected in pending:
            yield pending.pop(expected)
            expected += 1
    if pending:
        raise ValueError(f"in_input_order: records {sorted(pending)[:5]} came without all those before them")


def _vocode_mels(synth: Synthesizer, folder: Path, out_dir: Path) -> list[dict[str, Any]]:
    """Vocode every ``<id>.npy`` of ``folder`` (sorted by id), write the WAVs; manifest records."""
    import numpy as np

    from tts_pipeline.errors import UserError
    from tts_pipeline.inference.phrases import NAME_PATTERN

    if not folder.is_dir():
        raise UserError(f"--mels: not a folder: {folder}")
    paths = sorted(folder.glob("*.npy"))
    if not paths:
        raise UserError(f"--mels: no <id>.npy mels in {folder}")
    mels = []
    for path in paths:
        if not NAME_PATTERN.match(path.stem):
            raise UserError(f"{path}: the id {path.stem!r} is not safe as a file name")
        try:
            mel = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise UserError(f"{path}: not a readable .npy mel ({error})") from None
        if mel.ndim != 2 or mel.shape[0] != synth.audio.n_mel_channels or mel.shape[1] < 1:
            raise UserError(f"{path}: expected a mel of shape ({synth.audio.n_mel_channels}, T), got {mel.shape}")
        mels.append(mel.astype(np.float32))
    synth.warm_up()
    utterances = synth.vocode(mels)
    return [
        _write(synth, out_dir, path.stem, utterance.audio, {"mel": str(path), **_fields(utterance)})
        for path, utterance in zip(paths, utterances, strict=True)
    ]


def _fields(utterance: Any) -> dict[str, Any]:
    return {
        "n_tokens": utterance.n_tokens,
        "n_frames": utterance.n_frames,
        "batch": utterance.batch,
        "batch_size": utterance.batch_size,
        "fastpitch_ms": None if utterance.fastpitch_ms is None else round(utterance.fastpitch_ms, 3),
        "vocoder_ms": round(utterance.vocoder_ms, 3),
        **({} if utterance.complete else {"complete": False}),
    }


def _write(synth: Synthesizer, out_dir: Path, name: str, audio: np.ndarray, fields: dict[str, Any]) -> dict[str, Any]:
    """Write ``<name>.wav`` and return its manifest record."""
    from tts_pipeline.inference import write_wav

    rate = synth.audio.sampling_rate
    write_wav(out_dir / f"{name}.wav", audio, rate, synth.audio.max_wav_value)
    return {"name": name, "wav": f"{name}.wav", **fields, "seconds": round(len(audio) / rate, 6)}


class SynthesisTotals:
    """Totals of a run, counted as the records pass (none is kept): utterances, audio seconds, per-model
    compute seconds (each batch once), speed; and the WAV names, for the run's artifacts."""

    def __init__(self) -> None:
        self.wavs: list[str] = []
        self.audio_seconds = 0.0
        self.batch_ms: dict[int, tuple[float, float]] = {}

    def count(self, records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Pass ``records`` through, counting each."""
        for record in records:
            self.wavs.append(record["wav"])
            self.audio_seconds += record["seconds"]
            self.batch_ms[record["batch"]] = (record["fastpitch_ms"] or 0.0, record["vocoder_ms"])
            yield record

    def summary(self) -> dict[str, float]:
        fastpitch = sum(times[0] for times in self.batch_ms.values()) / 1000.0
        vocoder = sum(times[1] for times in self.batch_ms.values()) / 1000.0
        compute = fastpitch + vocoder
        return {
            "n_utterances": float(len(self.wavs)),
            "audio_seconds": self.audio_seconds,
            "fastpitch_seconds": fastpitch,
            "vocoder_seconds": vocoder,
            "compute_seconds": compute,
            "x_real_time": self.audio_seconds / compute if compute > 0 else 0.0,
        }
