"""Compute log-mels and frame-level pitch for every utterance (a process pool, restartable).

Reads ``manifest.{train,val,test}.jsonl`` and writes, per utterance, ``<out-dir>/mels/<id>.npy``
float32 ``(n_mels, T)`` and ``<out-dir>/pitch/<id>.npy`` float32 ``(T,)`` (Hz at the mel frame
centres, 0 = unvoiced), ``T = n_samples // hop``. Then ``pitch_stats.json`` (mean and std of the voiced
frames of the training split, which FastPitch normalises pitch with; each speaker's too when the
manifests name speakers) and, last of all, the index
``features.jsonl`` (id, split, n_frames, n_voiced per utterance). A rerun after a kill reuses the
arrays already written with the same settings and recomputes everything when the settings changed.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

if TYPE_CHECKING:
    from tts_pipeline.data.manifest_record import ManifestRecord

log = logging.getLogger(__name__)

N_FIGURES = 3  # validation utterances drawn (mel with f0) for MLflow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir")
    parser.add_argument("--out-dir", type=Path, required=True, help="the features folder (mels/ and pitch/ go here)")
    parser.add_argument("--pitch-stats", type=Path, required=True, help="pitch_stats.json to write")
    parser.add_argument("--index", type=Path, required=True, help="features.jsonl to write (last)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1: this process)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")


def _dataset_name(record: ManifestRecord) -> str:
    """The corpus folder name (``resources/<name>/wavs/<id>.wav``), for the run's dataset tag."""
    return Path(record.source_wav or record.wav).parent.parent.name or "unknown"


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, PitchConfig, parse_section
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.features.extract import extract_all
    from tts_pipeline.features.feature_set import STATS_SPLIT, pitch_statistics, read_manifest_utterances, write_index
    from tts_pipeline.features.figures import mel_pitch_figures

    payload = load_stage_section(args, "features")
    audio_cfg: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    pitch_cfg: PitchConfig = parse_section(PitchConfig, payload["pitch"], "pitch")
    manifests = read_manifest_utterances(args.manifest_dir, audio_cfg.sampling_rate)
    utterances = manifests.utterances

    # The declared outputs mark a finished run; a rerun removes them first, so a killed rerun never
    # leaves an index that describes arrays which have since been wiped or changed.
    for output in (args.index, args.pitch_stats):
        output.unlink(missing_ok=True)

    first = next(iter(manifests.records_by_split[STATS_SPLIT]))
    with tracked("features", payload, dataset=_dataset_name(first)) as run_log:
        result = extract_all(
            utterances, args.out_dir, audio_cfg, pitch_cfg, workers=max(1, args.workers), progress=not args.no_progress
        )
        pitch = pitch_statistics(utterances, result, pitch_cfg, manifests.speakers or None)
        stats = pitch.stats
        write_index(args.index, args.pitch_stats, utterances, result, stats)

        seconds = sum(u.n_samples for u in utterances) / audio_cfg.sampling_rate
        speed = pitch.computed_samples / audio_cfg.sampling_rate / max(result.seconds, 1e-9)  # of what was computed
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
                "voiced_fraction": stats["n_voiced_frames"] / max(pitch.train_frames, 1),
                **{
                    f"pitch_{moment}_hz_{name}": speaker[moment]
                    for name, speaker in stats.get("speakers", {}).items()
                    for moment in ("mean", "std")
                },
            }
        )
        run_log.log_artifact(args.pitch_stats)
        val_records = manifests.records_by_split.get("val", [])[:N_FIGURES]
        figures = mel_pitch_figures(val_records, FeatureLayout(args.out_dir), audio_cfg)
        for figure in figures:
            run_log.log_artifact(figure, "plots")
        log.info(
            "features: %d utterances (%.2f h; %d computed, %d reused) in %.1f s with %d workers (computed at %.0fx "
            "real time); train pitch %.1f +- %.1f Hz over %d voiced frames",
            *(len(utterances), seconds / 3600, result.n_computed, result.n_reused, result.seconds, args.workers),
            *(speed, stats["mean"], stats["std"], stats["n_voiced_frames"]),
        )
        for name, speaker in stats.get("speakers", {}).items():
            log.info(
                "features: speaker %s: train pitch %.1f +- %.1f Hz over %d voiced frames of %d utterances",
                name, speaker["mean"], speaker["std"], speaker["n_voiced_frames"], speaker["n_utterances"],
            )  # fmt: skip
