"""NVIDIA's inference benchmark settings and published figures (reference section 5), to reproduce
their procedure and to set our measurements beside theirs.

Their published "RTF" is audio seconds per second of compute (our ``x_real_time``); at batch size 1,
the only size these figures are for, their formula has no batch undercount, so the two compare
directly. Their latency is the mean per call.

The benchmark phrase itself (LJ018-0239, exactly 128 characters) is data, kept in
``config/phrases/benchmark_128.txt`` and read with the inference phrase reader, not repeated here.
"""

from __future__ import annotations

from typing import Any

BENCHMARK_AUDIO_SECONDS = 8.05
"""Approximate audio length NVIDIA's README gives for the 128-character phrase (about 693 frames)."""

BENCHMARK_ROWS = 8
"""Rows in NVIDIA's ``benchmark_8_128.tsv`` (the phrase repeated): batches are cut from these."""

WARMUP_CALLS = 100
"""Warm-up calls of NV-HFG's ``inference_benchmark.sh`` (NV-FP's uses 64)."""

REPEATS = 200
"""Timed repeats of NV-HFG's ``inference_benchmark.sh`` (NV-FP's uses 500; the README tables 100)."""

BATCH_SIZES = (1, 2, 4, 8)
"""Batch sizes NV-HFG's benchmark is run with (by hand, one at a time)."""

PUBLISHED: tuple[dict[str, Any], ...] = (
    {
        "source": "NVIDIA FastPitch README (A100 80 GB, TorchScript, denoising)",
        "batch_size": 1,
        "precision": "fp16",
        "latency_mean_s": 0.015,
        "x_real_time": 518.43,
    },
    {
        "source": "NVIDIA FastPitch README (A100 80 GB, TorchScript, denoising)",
        "batch_size": 1,
        "precision": "tf32",
        "latency_mean_s": 0.019,
        "x_real_time": 404.19,
    },
    {
        "source": "NVIDIA HiFi-GAN README (A100 80 GB, TorchScript)",
        "batch_size": 1,
        "precision": "fp16",
        "latency_mean_s": 0.019,
        "x_real_time": 403.94,
        "samples_per_s": 8_906_958.0,
    },
    {
        "source": "NVIDIA HiFi-GAN README (A100 80 GB, TorchScript)",
        "batch_size": 8,
        "precision": "fp16",
        "samples_per_s": 16_597_793.0,
    },
)
"""NVIDIA's published FastPitch + HiFi-GAN inference figures, keyed like our summary rows."""

_TACOTRON2_SOURCE = "NVIDIA Tacotron 2 README (DGX A100 40 GB, + WaveGlow {channels} channels)"

PUBLISHED_ACOUSTIC_MODELS: dict[str, tuple[dict[str, Any], ...]] = {
    "tacotron2": tuple(
        {
            "source": _TACOTRON2_SOURCE.format(channels=channels),
            "batch_size": batch,
            "precision": precision,
            "latency_mean_s": latency,
            "x_real_time": rtf,
            "samples_per_s": samples,
        }
        for channels, batch, precision, latency, samples, rtf in (
            (256, 1, "fp16", 0.80, 192_086.0, 8.74),
            (256, 4, "fp16", 1.05, 602_856.0, 6.85),
            (256, 1, "fp32", 0.87, 177_210.0, 8.02),
            (256, 4, "fp32", 1.27, 500_458.0, 5.67),
        )
    ),
}
"""NVIDIA's published figures of another acoustic model with its vocoder, by kind: their Tacotron 2 +
WaveGlow system on the same 128-character input (Tacotron 2 README, "Inference performance: NVIDIA DGX
A100"; latency from the start of Tacotron 2 to the end of WaveGlow, mean of 1000 runs; their RTF is our
``x_real_time``)."""
