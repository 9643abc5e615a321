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
