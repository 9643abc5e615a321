"""Compute log-mels and frame-level pitch for every utterance (a process pool, restartable).

Reads ``manifest.{train,val,test}.jsonl`` and writes, per utterance, ``<out-dir>/mels/<id>.npy``
float32 ``(n_mels, T)`` and ``<out-dir>/pitch/<id>.npy`` float32 ``(T,)`` (Hz at the mel frame
centres, 0 = unvoiced), ``T = n_samples // hop``. Then ``pitch_stats.json`` (mean and std of the voiced
frames of the training split, which FastPitch normalises pitch with) and, last of all, the index
``features.jsonl`` (id, split, n_frames, n_voiced per utterance). A rerun after a kill reuses the
arrays already written with the same settings and recomputes everything when the settings changed.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

log = logging.getLogger(__name__)

SPLITS = ("train", "val", "test")
STATS_SPLIT = "train"
N_FIGURES = 3  # validation utterances drawn (mel with f0) for MLflow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir")
    parser.add_argument("--out-dir", type=Path, required=True, help="the features folder (mels/ and pitch/ go here)")
    parser.add_argument("--pitch-stats", type=Path, required=True, help="pitch_stats.json to write")
    parser.add_argument("--index", type=Path, required=True, help="features.jsonl to write (last)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1: this process)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")


def _dataset_name(record: dict) -> str:
    """The corpus folder name (``resources/<name>/wavs/<id>.wav``), for the run's dataset tag."""
    return Path(record.get("source_wav") or record["wav"]).parent.parent.name or "unknown"


def run(args: argparse.Namespace) -> None:
    from tts_pipeline import files
    from tts_pipeline.config import AudioConfig, PitchConfig, parse_section
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.extract import Utterance, extract_all
    from tts_pipeline.features.pitch import PitchMoments

    payload = load_stage_section(args, "features")
    audio_cfg: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    pitch_cfg: PitchConfig = parse_section(PitchConfig, payload["pitch"], "pitch")

    utterances: list[Utterance] = []
    records_by_split: dict[str, list[dict]] = {}
    for split in SPLITS:
        path = manifest_path(args.manifest_dir, split)
        if not path.is_file():
            raise UserError(f"--manifest-dir: {path} not found (the manifest stage writes it)")
        records_by_split[split] = read_manifest(path)
        for record in records_by_split[split]:
            try:
                utterances.append(Utterance.from_record(record, split))
            except (KeyError, TypeError, ValueError) as error:
                raise UserError(f"{path}: record {record.get('id', '?')} lacks a usable field ({error})") from None
            if int(record.get("sample_rate", audio_cfg.sampling_rate)) != audio_cfg.sampling_rate:
                raise UserError(
                    f"{path}: utterance {record['id']} is at {record['sample_rate']} Hz, expected "
                    f"audio.sampling_rate = {audio_cfg.sampling_rate}"
                )
    if not any(u.split == STATS_SPLIT for u in utterances):
        raise UserError(f"{manifest_path(args.manifest_dir, STATS_SPLIT)}: no training utterances for pitch statistics")

    # The declared outputs mark a finished run; a rerun removes them first, so a killed rerun never
    # leaves an index that describes arrays which have since been wiped or changed.
    for output in (args.index, args.pitch_stats):
        output.unlink(missing_ok=True)

    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.features.figures import mel_pitch_figures

    first = next(iter(records_by_split[STATS_SPLIT]))
    with tracked("features", payload, dataset=_dataset_name(first)) as run_log:
        result = extract_all(
            utterances, args.out_dir, audio_cfg, pitch_cfg, workers=max(1, args.workers), progress=not args.no_progress
        )
        moments, train_frames, computed_samples = PitchMoments(), 0, 0
        for utterance, summary in zip(utterances, result.summaries, strict=True):
            if utterance.split == STATS_SPLIT:
                moments = moments + PitchMoments(summary.n_voiced, summary.voiced_sum, summary.voiced_sum_sq)
                train_frames += summary.n_frames
            computed_samples += utterance.n_samples if summary.computed else 0
        stats = {
            **moments.stats(),
            "n_frames": train_frames,
            "n_utterances": sum(u.split == STATS_SPLIT for u in utterances),
            "split": STATS_SPLIT,
            "method": pitch_cfg.method,
            "floor_hz": pitch_cfg.floor_hz,
            "ceiling_hz": pitch_cfg.ceiling_hz,
        }
        if stats["n_voiced_frames"] == 0:
            raise UserError(
                f"no voiced frame in the {STATS_SPLIT} split: pitch statistics are undefined "
                f"(check pitch.floor_hz / ceiling_hz / voicing_threshold against the audio)"
            )
        files.sync()  # the arrays were written without fsync; make them durable before the index says so
        files.write_json(args.pitch_stats, stats)
        files.write_jsonl(
            args.index,
            (
                {"id": s.id, "split": u.split, "n_frames": s.n_frames, "n_voiced": s.n_voiced}
                for u, s in zip(utterances, result.summaries, strict=True)
            ),
        )

        seconds = sum(u.n_samples for u in utterances) / audio_cfg.sampling_rate
        speed = computed_samples / audio_cfg.sampling_rate / max(result.seconds, 1e-9)  # of what was computed
        run_log.log_metrics(
            {
                "n_utterances": len(utterances),
                "n_computed": result.n_computed,
                "n_reused": result.n_reused,
                "hours": seconds / 3600,
                "seconds": result.seconds,
                "x_real_time": speed,
                "pitch_mean_hz": stats["mean"],
                "pitch_std_hz": stats["std"],
                "voiced_fraction": stats["n_voiced_frames"] / max(train_frames, 1),
            }
        )
        run_log.log_artifact(args.pitch_stats)
        val_records = records_by_split.get("val", [])[:N_FIGURES]
        figures = mel_pitch_figures(val_records, FeatureLayout(args.out_dir), audio_cfg)
        for figure in figures:
            run_log.log_artifact(figure, "plots")
        log.info(
            "features: %d utterances (%.2f h; %d computed, %d reused) in %.1f s with %d workers (computed at %.0fx "
            "real time); train pitch %.1f +- %.1f Hz over %d voiced frames",
            *(len(utterances), seconds / 3600, result.n_computed, result.n_reused, result.seconds, args.workers),
            *(speed, stats["mean"], stats["std"], stats["n_voiced_frames"]),
        )
