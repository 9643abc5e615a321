"""Per-symbol durations (MAS on the trained aligner, or TextGrid phones) and per-symbol pitch.

For every utterance of train, val and test it writes, atomically, under ``--features-dir``:

- ``durations/<id>.npy``: int32 ``(L,)`` mel frames per symbol, summing to the mel's ``T``;
- ``symbols/<id>.npy``: int32 ``(L,)`` the symbol ids those durations belong to;
- ``symbol_pitch/<id>.npy``: float32 ``(L,)`` mean voiced pitch (Hz) in each symbol's frames, 0 if none.

``durations.source: aligner`` encodes the cleaned text as the aligner was trained (characters or
ARPAbet, its symbol set), runs it on the CPU in batches and takes MAS on its soft attention.
``durations.source: textgrid`` reads ``<textgrid_dir>/<id>.TextGrid`` (``textgrid_dir`` null =
``<corpus root>/alignments``): the ``durations.textgrid_tier`` labels become the symbols, with a
symbol table built from the training TextGrids.

Last, ``--index`` (``durations.json``): the source, the symbol table (ids index it; pad = 0),
per-split counts, and, when the corpus carries ground-truth word timings
(``<corpus root>/alignments/*.TextGrid``), the word-boundary error of the val split
(``tts-pipeline alignment-error`` prints the same for any split).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.stages.common import add_section_argument, load_section, tracked

log = logging.getLogger(__name__)

SECTION_KEYS = ("durations", "audio", "text.symbol_set")
TRUTH_DIR_NAME = "alignments"  # where a corpus keeps ground-truth word timings (the demo corpus does)
DEFAULT_PRIOR_SCALING = 1.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_section_argument(parser)
    parser.add_argument("--manifest-dir", type=Path, required=True, help="folder of manifest.{train,val,test}.jsonl")
    parser.add_argument(
        "--features-dir", type=Path, required=True, help="features folder: reads mels/, pitch/; writes durations/ ..."
    )
    parser.add_argument(
        "--aligner", default="", help="the trained aligner's model.pt (durations.source 'aligner'; '' = none)"
    )
    parser.add_argument("--corpus-record", type=Path, required=True, help="corpus.json written by the corpus stage")
    parser.add_argument("--index", type=Path, required=True, help="durations.json to write last")
    parser.add_argument("--batch-size", type=int, default=16, help="utterances per aligner forward pass")


# --------------------------------------------------------------------------------------------------
# shared bookkeeping
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Utterance:
    id: str
    split: str
    text: str


@dataclass(frozen=True)
class FeatureDirs:
    """Inputs (mels, pitch) and per-utterance outputs under the features folder."""

    root: Path

    def mel(self, utterance_id: str) -> Path:
        return self.root / "mels" / f"{utterance_id}.npy"

    def pitch(self, utterance_id: str) -> Path:
        return self.root / "pitch" / f"{utterance_id}.npy"

    @property
    def durations(self) -> Path:
        return self.root / "durations"

    @property
    def symbols(self) -> Path:
        return self.root / "symbols"

    @property
    def symbol_pitch(self) -> Path:
        return self.root / "symbol_pitch"


@dataclass
class SplitCounts:
    n_utterances: int = 0
    n_symbols: int = 0
    n_frames: int = 0
    n_zero_durations: int = 0
    n_unknown_symbols: int = 0
    unknown_labels: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_utterances": self.n_utterances,
            "n_symbols": self.n_symbols,
            "n_frames": self.n_frames,
            "n_zero_durations": self.n_zero_durations,
            "n_unknown_symbols": self.n_unknown_symbols,
            "unknown_labels": dict(sorted(self.unknown_labels.items())),
        }


def _n_frames(dirs: FeatureDirs, utterance_id: str) -> int:
    """``T`` of the utterance's mel (read from the .npy header only)."""
    from tts_pipeline.errors import UserError

    path = dirs.mel(utterance_id)
    try:
        shape = np.load(path, mmap_mode="r").shape
    except (OSError, ValueError) as error:
        raise UserError(f"{utterance_id}: cannot read its mel {path} ({error}); run the features stage") from None
    if len(shape) != 2:
        raise UserError(f"{utterance_id}: mel {path} has shape {shape}, expected (n_mels, T)")
    return int(shape[1])


def _write_utterance(
    dirs: FeatureDirs, utterance: Utterance, durations: np.ndarray, symbol_ids: np.ndarray, n_frames: int
) -> None:
    """Check the utterance's vectors, compute its per-symbol pitch, and write the three files."""
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.durations import symbol_pitch
    from tts_pipeline.files import save_npy

    if int(durations.sum()) != n_frames or durations.shape != symbol_ids.shape:
        raise AssertionError(f"{utterance.id}: durations sum {durations.sum()} != T {n_frames} or length mismatch")
    pitch_path = dirs.pitch(utterance.id)
    try:
        pitch = np.load(pitch_path)
    except (OSError, ValueError) as error:
        raise UserError(
            f"{utterance.id}: cannot read its pitch {pitch_path} ({error}); run the features stage"
        ) from None
    if pitch.shape != (n_frames,):
        raise UserError(
            f"{utterance.id}: pitch {pitch_path} has shape {pitch.shape}, expected ({n_frames},) as its mel"
        )
    save_npy(dirs.durations / f"{utterance.id}.npy", durations.astype(np.int32))
    save_npy(dirs.symbols / f"{utterance.id}.npy", symbol_ids.astype(np.int32))
    save_npy(dirs.symbol_pitch / f"{utterance.id}.npy", symbol_pitch(pitch, durations))


# --------------------------------------------------------------------------------------------------
# source: the aligner
# --------------------------------------------------------------------------------------------------


def _info_value(info: Any, key: str) -> Any:
    """A value the aligner's file carries: an attribute of ``info``, or a key of it or of its ``extra``."""
    if isinstance(info, Mapping):
        return info.get(key)
    if hasattr(info, key):
        return getattr(info, key)
    extra = getattr(info, "extra", None)
    return extra.get(key) if isinstance(extra, Mapping) else None


def align_batch(
    model: Any,
    texts: Sequence[Sequence[int]],
    mels: Sequence[np.ndarray],
    prior_fn: Callable[[int, int], np.ndarray] | None,
) -> list[np.ndarray]:
    """Durations of a batch by MAS on the aligner's soft attention, on the CPU.

    Args:
        model: ``model(text (B, L) long, text_lengths (B,), mels (B, n_mels, T), prior (B, T, L) | None)``
            returning an object with ``attn_soft`` ``(B, 1, T, L)``.
        texts: ``B`` symbol-id sequences (each ``L_b <= T_b``).
        mels: ``B`` log-mels ``(n_mels, T_b)``.
        prior_fn: ``(T, L) -> (T, L)`` prior, or None for no prior.

    Returns:
        ``B`` int32 ``(L_b,)`` duration vectors, each summing to ``T_b``.
    """
    import torch

    from tts_pipeline.features.durations import durations_from_attention

    text_lengths = [len(text) for text in texts]
    mel_lengths = [mel.shape[1] for mel in mels]
    batch, n_mels = len(texts), mels[0].shape[0]
    text = np.zeros((batch, max(text_lengths)), dtype=np.int64)
    mel = np.zeros((batch, n_mels, max(mel_lengths)), dtype=np.float32)
    prior = np.zeros((batch, max(mel_lengths), max(text_lengths)), dtype=np.float32) if prior_fn is not None else None
    for index, (ids, features) in enumerate(zip(texts, mels, strict=True)):
        text[index, : len(ids)] = ids
        mel[index, :, : features.shape[1]] = features
        if prior is not None:
            prior[index, : features.shape[1], : len(ids)] = prior_fn(features.shape[1], len(ids))
    with torch.no_grad():
        output = model(
            torch.from_numpy(text),
            torch.tensor(text_lengths),
            torch.from_numpy(mel),
            prior=None if prior is None else torch.from_numpy(prior),
        )
    # As training's hard alignment: log of the soft attention, floored so that an underflowed 0
    # stays finite.
    log_attn = torch.log(output.attn_soft.float().clamp_min(torch.finfo(torch.float32).tiny)).numpy()
    return [
        durations_from_attention(log_attn[index, 0, :n_frames, :n_tokens])
        for index, (n_frames, n_tokens) in enumerate(zip(mel_lengths, text_lengths, strict=True))
    ]


def durations_from_aligner(
    utterances: Sequence[Utterance],
    dirs: FeatureDirs,
    aligner_path: str,
    symbol_set: str,
    batch_size: int,
    counts: dict[str, SplitCounts],
) -> dict[str, Any]:
    """Run the aligner on every utterance and write its files; returns the index's symbol fields."""
    import torch

    from tts_pipeline.errors import UserError
    from tts_pipeline.models.aligner import load_aligner
    from tts_pipeline.text import encode, get_symbols

    model, info = load_aligner(aligner_path)
    model = model.to("cpu").eval()
    symbols = str(_info_value(info, "symbols") or "characters")
    trained_set = str(_info_value(info, "symbol_set") or symbol_set)
    if trained_set != symbol_set:
        raise UserError(
            f"{aligner_path}: the aligner was trained on symbol set {trained_set!r}, "
            f"but text.symbol_set is {symbol_set!r}; retrain it or change text.symbol_set"
        )
    table = get_symbols(symbol_set)
    trained_table = list(_info_value(info, "symbol_table") or table)
    if trained_table != table:
        raise UserError(
            f"{aligner_path}: its symbol table ({len(trained_table)} symbols) differs from symbol set "
            f"{symbol_set!r} as this version defines it ({len(table)}); retrain the aligner"
        )
    scaling = _info_value(info, "prior_scaling")
    if scaling is None:
        log.warning("%s does not record its prior_scaling; using %s", aligner_path, DEFAULT_PRIOR_SCALING)
        scaling = DEFAULT_PRIOR_SCALING
    prior_fn = None
    if float(scaling) > 0:
        from tts_pipeline.models.aligner.prior import beta_binomial_prior

        def prior_fn(n_frames: int, n_tokens: int) -> np.ndarray:
            return beta_binomial_prior(n_frames, n_tokens, float(scaling))

    jobs: list[tuple[int, Utterance, list[int]]] = []
    for utterance in utterances:
        ids = encode(utterance.text, symbols, symbol_set)
        n_frames = _n_frames(dirs, utterance.id)
        if not 0 < len(ids) <= n_frames:
            raise UserError(
                f"{utterance.id}: {len(ids)} symbols for {n_frames} mel frames; MAS needs 1 <= symbols <= frames"
            )
        jobs.append((n_frames, utterance, ids))
    # Similar lengths share a batch (little padding); the order is fixed, so reruns give the same batches.
    jobs.sort(key=lambda job: (job[0], job[1].id))
    log.info("aligner (%s, %s): %d utterances, batch %d, %d CPU threads", symbols, symbol_set, len(jobs),
             batch_size, torch.get_num_threads())  # fmt: skip
    for start in range(0, len(jobs), batch_size):
        batch = jobs[start : start + batch_size]
        mels = [np.load(dirs.mel(utterance.id)) for _, utterance, _ in batch]
        durations = align_batch(model, [ids for _, _, ids in batch], mels, prior_fn)
        for (n_frames, utterance, ids), duration in zip(batch, durations, strict=True):
            _write_utterance(dirs, utterance, duration, np.asarray(ids, dtype=np.int32), n_frames)
            split = counts[utterance.split]
            split.n_utterances += 1
            split.n_symbols += len(ids)
            split.n_frames += n_frames
            split.n_zero_durations += int((duration == 0).sum())
    return {"symbols_kind": symbols, "symbol_set": symbol_set, "symbols": table}


# --------------------------------------------------------------------------------------------------
# source: TextGrids
# --------------------------------------------------------------------------------------------------


def _textgrid_path(textgrid_dir: Path, utterance_id: str) -> Path:
    from tts_pipeline.errors import UserError

    path = textgrid_dir / f"{utterance_id}.TextGrid"
    if not path.is_file():
        raise UserError(f"{utterance_id}: no TextGrid {path} (durations.textgrid_dir)")
    return path


def durations_from_textgrids(
    utterances: Sequence[Utterance],
    dirs: FeatureDirs,
    textgrid_dir: Path,
    tier: str,
    hop_length: int,
    sampling_rate: int,
    counts: dict[str, SplitCounts],
) -> dict[str, Any]:
    """Read every utterance's tier, build the symbol table from train, write the files."""
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.durations import PAUSE_SYMBOL, UNKNOWN_SYMBOL, SymbolTable, read_textgrid_durations

    frame_s = hop_length / sampling_rate
    read = []
    for utterance in utterances:
        n_frames = _n_frames(dirs, utterance.id)
        path = _textgrid_path(textgrid_dir, utterance.id)
        tier_durations = read_textgrid_durations(path, tier, n_frames, hop_length, sampling_rate)
        # A TextGrid of another recording (or of the audio before trimming) would still "fit" after
        # clamping; its length tells.
        end = tier_durations.intervals[-1].end
        if abs(end - n_frames * frame_s) > 2 * frame_s:
            raise UserError(
                f"{utterance.id}: {path} ends at {end:.3f} s but the audio has {n_frames} frames "
                f"({n_frames * frame_s:.3f} s); is it the TextGrid of this recording?"
            )
        read.append((utterance, tier_durations, n_frames))

    table = SymbolTable.from_labels(
        label for utterance, td, _ in read if utterance.split == "train" for label in td.labels
    )
    for utterance, tier_durations, n_frames in read:
        symbol_ids, unknown = table.ids(tier_durations.labels)
        _write_utterance(dirs, utterance, tier_durations.durations, symbol_ids, n_frames)
        split = counts[utterance.split]
        split.n_utterances += 1
        split.n_symbols += len(symbol_ids)
        split.n_frames += n_frames
        split.n_zero_durations += tier_durations.n_zero
        split.n_unknown_symbols += len(unknown)
        split.unknown_labels.update(unknown)
    for name, split in counts.items():
        if split.n_unknown_symbols:
            log.warning(
                "%s: %d phones never seen in the training TextGrids mapped to %s: %s",
                name,
                split.n_unknown_symbols,
                UNKNOWN_SYMBOL,
                dict(split.unknown_labels),
            )
    return {
        "symbols_kind": "textgrid",
        "symbol_set": None,
        "symbols": list(table.symbols),
        "pause_symbol": PAUSE_SYMBOL,
        "unknown_symbol": UNKNOWN_SYMBOL,
        "textgrid_dir": str(textgrid_dir),
        "textgrid_tier": tier,
    }


# --------------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------------


def read_utterances(manifest_dir: Path) -> list[Utterance]:
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.data.splits import SPLIT_NAMES

    return [
        Utterance(id=record["id"], split=split, text=record["text"])
        for split in SPLIT_NAMES
        for record in read_manifest(manifest_path(manifest_dir, split))
    ]


def read_corpus_root(record_path: Path) -> tuple[str, Path]:
    """Name and root folder of the corpus, from the corpus stage's record."""
    from tts_pipeline.errors import UserError

    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        return str(record["name"]), Path(record["root"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise UserError(f"{record_path}: not a corpus record with 'name' and 'root' ({error})") from None


def alignment_quality(
    index: dict[str, Any], utterances: Sequence[Utterance], dirs: FeatureDirs, truth_dir: Path, split: str = "val"
) -> dict[str, Any]:
    """Word-boundary errors of one split against ``truth_dir`` (see features.alignment_eval)."""
    from tts_pipeline.features.alignment_eval import DurationSource, evaluate_split

    how = DurationSource(
        source=index["source"],
        symbols=index["symbols"],
        hop_length=index["hop_length"],
        sampling_rate=index["sampling_rate"],
        textgrid_dir=Path(index["textgrid_dir"]) if index.get("textgrid_dir") else None,
        textgrid_tier=index.get("textgrid_tier") or "phones",
    )
    ids = [utterance.id for utterance in utterances if utterance.split == split]
    report = evaluate_split(split, ids, dirs.durations, dirs.symbols, truth_dir, how)
    summary: dict[str, Any] = {"truth_dir": str(truth_dir), **report.summary()}
    if how.source != "textgrid":
        # The same durations under the other word convention (see word_spans_from_symbols).
        joined_how = replace(how, space_joins_next_word=True)
        joined = evaluate_split(split, ids, dirs.durations, dirs.symbols, truth_dir, joined_how)
        keys = ("n_words", "boundary_error_ms", "start_error_ms", "end_error_ms")
        summary["space_joins_next_word"] = {key: value for key, value in joined.summary().items() if key in keys}
    return summary


N_FIGURES = 3


def _figures(args: argparse.Namespace, symbol_table: Sequence[str], audio: Any, dirs: FeatureDirs) -> list[Path]:
    """Durations (and, from the aligner, attention) figures of the first validation utterances."""
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.features.figures import duration_figures

    records = read_manifest(manifest_path(args.manifest_dir, "val"))[:N_FIGURES]
    aligner = None
    if args.aligner:
        from tts_pipeline.models.aligner import load_aligner

        model, info = load_aligner(args.aligner)
        aligner = (model.eval(), float(info.prior_scaling or 0.0))
    return duration_figures(records, dirs.root, symbol_table, audio, dirs.root / "plots", aligner)


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, DurationsConfig, parse_section
    from tts_pipeline.data.splits import SPLIT_NAMES
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.alignment_eval import format_summary
    from tts_pipeline.files import write_json

    payload = load_section(args, *SECTION_KEYS)
    cfg: DurationsConfig = parse_section(DurationsConfig, payload["durations"], "durations")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    symbol_set = str(payload["text.symbol_set"])
    corpus_name, corpus_root = read_corpus_root(args.corpus_record)
    utterances = read_utterances(args.manifest_dir)
    dirs = FeatureDirs(args.features_dir)
    counts = {split: SplitCounts() for split in SPLIT_NAMES}
    if args.batch_size < 1:
        raise UserError(f"--batch-size: expected >= 1, got {args.batch_size}")

    with tracked("durations", payload, dataset=corpus_name) as run_log:
        started = time.perf_counter()
        if cfg.source == "aligner":
            if not args.aligner:
                raise UserError("durations.source is 'aligner' but no --aligner model.pt was given")
            symbol_fields = durations_from_aligner(utterances, dirs, args.aligner, symbol_set, args.batch_size, counts)
        else:
            textgrid_dir = Path(cfg.textgrid_dir) if cfg.textgrid_dir else corpus_root / TRUTH_DIR_NAME
            symbol_fields = durations_from_textgrids(
                utterances, dirs, textgrid_dir, cfg.textgrid_tier, audio.hop_length, audio.sampling_rate, counts
            )
        seconds = time.perf_counter() - started
        index: dict[str, Any] = {
            "source": cfg.source,
            **symbol_fields,
            "pad_id": 0,
            "hop_length": audio.hop_length,
            "sampling_rate": audio.sampling_rate,
            "durations_dir": str(dirs.durations),
            "symbols_dir": str(dirs.symbols),
            "symbol_pitch_dir": str(dirs.symbol_pitch),
            "splits": {split: count.as_dict() for split, count in counts.items()},
            "seconds": round(seconds, 3),
        }
        truth_dir = corpus_root / TRUTH_DIR_NAME
        quality = alignment_quality(index, utterances, dirs, truth_dir) if truth_dir.is_dir() else None
        index["alignment_quality"] = quality
        write_json(args.index, index)

        metrics: dict[str, float] = {"seconds": seconds, "n_symbols_in_table": len(index["symbols"])}
        for split, count in counts.items():
            metrics.update(
                {f"{split}_{key}": value for key, value in count.as_dict().items() if isinstance(value, int)}
            )
        if quality is not None and quality["boundary_error_ms"] is not None:
            for key in ("median", "mean", "p90"):
                metrics[f"val_word_boundary_error_{key}_ms"] = quality["boundary_error_ms"][key]
            joined = (quality.get("space_joins_next_word") or {}).get("boundary_error_ms")
            if joined:
                metrics["val_word_boundary_error_median_ms_space_joined"] = joined["median"]
            metrics["val_alignment_skipped"] = quality["n_skipped"]
        run_log.log_metrics(metrics)
        run_log.log_artifact(args.index)
        for figure in _figures(args, index["symbols"], audio, dirs):
            run_log.log_artifact(figure, "plots")
        total = sum(count.n_utterances for count in counts.values())
        log.info("durations (%s): %d utterances in %.1f s", cfg.source, total, seconds)
        if quality is not None:
            log.info("%s", format_summary(quality))
