"""Benchmark feature extraction speed in times real time per CPU core (mel, pitch, everything).

Runs in one process with one torch thread and measures CPU time (``time.process_time``), so the
figure is audio seconds per CPU second of one core, whatever else the machine is doing. Three
measurements, each over the same N utterances and repeated R times:

- ``mel``: the log-mel of audio already in memory;
- ``pitch (<method>)``: the pitch of audio already in memory (praat; pyin too with ``--pyin``);
- ``mel+pitch+io``: what the ``features`` stage does per utterance: read the wav, both features, and
  both ``.npy`` files written atomically (into a temporary folder).

Audio comes from a manifest (``--manifest``) or, without one, from speech-like synthetic clips
(harmonic glides with syllable-like envelopes, pauses and noise). Prints the median and min/max over
the repeats, then the headline figure (``mel+pitch+io``, median, x real time per core) and the
projected time for LJSpeech (24 h of audio) on 2 cores. CPU time is robust to other processes but not
immune: a busy machine (shared caches, frequent switches) still costs a few percent; compare variants
under the same load.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tts_pipeline.config import AudioConfig, PitchConfig
    from tts_pipeline.features.extract import Utterance

log = logging.getLogger(__name__)

LJSPEECH_HOURS = 24.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", type=Path, help="a manifest.<split>.jsonl; default: synthetic clips")
    parser.add_argument("--config", type=Path, help="pipeline YAML for the audio and pitch sections; default: defaults")
    parser.add_argument("--n", type=int, default=50, help="utterances (default 50)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of each measurement (default 3)")
    parser.add_argument("--pyin", action="store_true", help="also measure pitch with pyin (slow)")
    parser.add_argument(
        "--praat-rate",
        type=int,
        help="analyse pitch with Praat at this sampling rate (e.g. 11025); default: the audio's",
    )
    parser.add_argument("--cores", type=int, default=2, help="cores for the LJSpeech projection (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic clips")
    parser.add_argument("--json", type=Path, help="also write the results here")


@dataclass(frozen=True)
class Measurement:
    """Times real time per core of each repeat (audio seconds / CPU seconds)."""

    name: str
    speeds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.speeds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "median": self.median,
            "min": min(self.speeds),
            "max": max(self.speeds),
            "repeats": self.speeds,
        }


def speechlike_clip(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    """A float32 clip that exercises pitch trackers like speech: voiced syllables with gliding f0 and
    decaying harmonics, unvoiced noise bursts and short pauses, at a speech-like level."""
    n = int(seconds * rate)
    out = np.zeros(n, dtype=np.float64)
    position = int(rng.uniform(0.1, 0.3) * rate)  # leading silence
    while position < n - int(0.3 * rate):
        length = int(rng.uniform(0.08, 0.35) * rate)
        segment = slice(position, min(n, position + length))
        size = segment.stop - segment.start
        if rng.random() < 0.75:  # voiced syllable
            f0 = np.linspace(rng.uniform(90, 250), rng.uniform(90, 250), size)
            phase = 2 * np.pi * np.cumsum(f0) / rate
            wave = sum((0.7**k) * np.sin(k * phase) for k in range(1, 12))
        else:  # fricative-like noise
            wave = 0.3 * rng.standard_normal(size)
        out[segment] = wave * np.hanning(size) * rng.uniform(0.1, 0.3)
        position += length + int(rng.uniform(0.0, 0.15) * rate)
    out += 3e-4 * rng.standard_normal(n)
    return out.astype(np.float32)


def _measure(name: str, work: Callable[[], None], audio_seconds: float, repeats: int) -> Measurement:
    speeds = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        speeds.append(audio_seconds / max(time.process_time() - start, 1e-9))
    return Measurement(name, speeds)


def _utterances_from_manifest(path: Path, n: int) -> list[Utterance]:
    from tts_pipeline.data.manifest import read_manifest
    from tts_pipeline.features.extract import Utterance

    records = read_manifest(path)[:n]
    if not records:
        raise SystemExit(f"{path}: no utterances")
    return [Utterance.from_record(record, "bench") for record in records]


def _synthetic_utterances(folder: Path, n: int, rate: int, seed: int) -> list[Utterance]:
    import soundfile as sf

    from tts_pipeline.features.extract import Utterance

    rng = np.random.default_rng(seed)
    utterances = []
    for index in range(n):
        clip = speechlike_clip(rng.uniform(1.5, 9.0), rate, rng)
        path = folder / f"synth-{index:04d}.wav"
        sf.write(path, clip, rate, subtype="PCM_16")
        utterances.append(Utterance(f"synth-{index:04d}", "bench", str(path), clip.size))
    return utterances


def run_benchmark(
    utterances: Sequence[Utterance],
    audio_cfg: AudioConfig,
    pitch_cfg: PitchConfig,
    *,
    repeats: int,
    pyin: bool,
    scratch: Path,
    praat_rate: int | None = None,
) -> list[Measurement]:
    """The three (or four) measurements over ``utterances``; ``scratch`` receives the written arrays."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.features.extract import ArrayWriter, FeatureExtractor, compute_utterance, single_threaded_torch
    from tts_pipeline.features.pitch import praat_pitch, pyin_pitch

    extractor = FeatureExtractor(audio_cfg, pitch_cfg, praat_rate)
    clips = [load_wav(u.wav, audio_cfg.sampling_rate, audio_cfg.max_wav_value) for u in utterances]
    seconds = sum(clip.size for clip in clips) / audio_cfg.sampling_rate
    results = []
    with single_threaded_torch():
        extractor.extract(clips[0])  # warm-up: lazy imports and first-call allocations
        results.append(_measure("mel", lambda: [extractor.mel(c) for c in clips], seconds, repeats))
        praat_name = "pitch (praat)" if praat_rate is None else f"pitch (praat @ {praat_rate} Hz)"
        results.append(
            _measure(
                praat_name,
                lambda: [praat_pitch(c, pitch_cfg, audio_cfg, analysis_rate=praat_rate) for c in clips],
                seconds,
                repeats,
            )
        )
        if pyin:
            pyin_pitch(clips[0][: audio_cfg.sampling_rate], pitch_cfg, audio_cfg)  # warm-up: numba compiles
            results.append(
                _measure("pitch (pyin)", lambda: [pyin_pitch(c, pitch_cfg, audio_cfg) for c in clips], seconds, repeats)
            )
        counter = iter(range(repeats))

        def full() -> None:
            out = scratch / f"run{next(counter)}"  # a fresh folder: nothing to reuse
            with ArrayWriter() as writer:  # as the stage does: writes overlap the next utterance
                for utterance in utterances:
                    compute_utterance(extractor, utterance, out, writer)

        method = pitch_cfg.method if praat_rate is None or pitch_cfg.method != "praat" else f"praat @ {praat_rate} Hz"
        results.append(_measure(f"mel+pitch ({method})+io", full, seconds, repeats))
    return results


def format_report(results: Sequence[Measurement], n: int, seconds: float, repeats: int, cores: int) -> str:
    lines = [
        "feature extraction speed, x real time per core (audio s / CPU s; 1 process, 1 torch thread)",
        f"{n} utterances, {seconds:.1f} s of audio, {repeats} repeats",
        "",
        f"{'measurement':<28}{'median':>10}{'min':>10}{'max':>10}",
    ]
    for result in results:
        lines.append(f"{result.name:<28}{result.median:>10.1f}{min(result.speeds):>10.1f}{max(result.speeds):>10.1f}")
    full = results[-1]
    minutes = LJSPEECH_HOURS * 3600 / (full.median * cores) / 60
    lines += [
        "",
        f"{full.name}: {full.median:.1f}x real time per core (median of {repeats}), the features stage's work per "
        "utterance: read the wav, mel, pitch, write both .npy",
        f"projected LJSpeech ({LJSPEECH_HOURS:g} h of audio) on {cores} cores: {minutes:.1f} min ({full.name}, median)",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, PitchConfig, load_config

    if args.config is not None:
        config = load_config(args.config)
        audio_cfg, pitch_cfg = config.audio, config.pitch
    else:
        audio_cfg, pitch_cfg = AudioConfig(), PitchConfig()
    with tempfile.TemporaryDirectory(prefix="bench-features-") as tmp:
        scratch = Path(tmp)
        if args.manifest is not None:
            utterances = _utterances_from_manifest(args.manifest, args.n)
        else:
            (scratch / "wavs").mkdir()
            utterances = _synthetic_utterances(scratch / "wavs", args.n, audio_cfg.sampling_rate, args.seed)
        seconds = sum(u.n_samples for u in utterances) / audio_cfg.sampling_rate
        results = run_benchmark(
            utterances,
            audio_cfg,
            pitch_cfg,
            repeats=max(1, args.repeats),
            pyin=args.pyin,
            scratch=scratch,
            praat_rate=args.praat_rate,
        )
    print(format_report(results, len(utterances), seconds, max(1, args.repeats), args.cores))
    if args.json is not None:
        from tts_pipeline import files

        files.write_json(
            args.json,
            {
                "n_utterances": len(utterances),
                "audio_seconds": seconds,
                "source": str(args.manifest or "synthetic"),
                "results": [r.as_dict() for r in results],
            },
        )
    log.debug("bench-features: %s", json.dumps([r.as_dict() for r in results]))
