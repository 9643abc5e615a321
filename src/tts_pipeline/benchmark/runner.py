"""Run an inference call repeatedly and record the latency of each of its components.

The procedure is NVIDIA's (reference 5.3): untimed warm-up calls (cuDNN autotuning, allocator
growth, TorchScript/compile specialisation happen there), then timed repeats. The runner is generic:
the call receives a :class:`~tts_pipeline.timers.Timer` and wraps each model in it, so
FastPitch and the vocoder are timed separately within one call, and returns what it produced::

    def call(timer: Timer) -> CallResult:
        with torch.inference_mode():
            with timer("fastpitch"):
                out = fastpitch(tokens)
            with timer("vocoder"):
                audio = vocoder(out.mel)
        return CallResult(utterances=tokens.shape[0], audio_samples=int(out.mel_lengths.sum()) * hop)

    run = benchmark(call, warmup=100, repeats=200, device=device)
    row = run.summarize(sampling_rate=22050)

Work outside the ``with timer(...)`` blocks (building inputs, copying results) is not counted, as
in NVIDIA's latency (generator + vocoder). Sweeps over precision and batch size are loops over
:func:`benchmark` in the stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from tts_pipeline.benchmark.stats import summarize
from tts_pipeline.benchmark.timing import LatencySamples
from tts_pipeline.timers import Clock, Timer


@dataclass(frozen=True)
class CallResult:
    """What one call produced.

    Attributes:
        utterances: Utterances synthesised by the call (its batch size B).
        audio_samples: Audio samples produced, summed over the utterances, padding excluded
            (``sum(mel_lengths) * hop``, NVIDIA's count).
    """

    utterances: int
    audio_samples: int

    def __post_init__(self) -> None:
        if self.utterances < 1 or self.audio_samples < 1:
            raise ValueError(
                f"call result: expected >= 1 utterance and >= 1 audio sample, got {self.utterances} and "
                f"{self.audio_samples}"
            )


@dataclass
class BenchmarkRun:
    """The timed repeats of one benchmark (warm-up calls are not in it).

    Attributes:
        latencies: Per-call seconds of each component and of their per-call sum.
        calls: What each timed call produced, in order (``len(calls) == len(latencies)``).
    """

    latencies: LatencySamples = field(default_factory=LatencySamples)
    calls: list[CallResult] = field(default_factory=list)

    @property
    def batch_size(self) -> int:
        """The utterances per call; raises if the calls differ (then summarise each batch size apart)."""
        sizes = {call.utterances for call in self.calls}
        if len(sizes) != 1:
            raise ValueError(f"benchmark run: expected one batch size, got {sorted(sizes)}")
        return sizes.pop()

    def audio_seconds_per_call(self, sampling_rate: int) -> np.ndarray:
        """float64 ``(n_calls,)`` seconds of audio each call produced (all its utterances)."""
        return np.asarray([call.audio_samples for call in self.calls], dtype=np.float64) / sampling_rate

    def summarize(self, sampling_rate: int) -> dict[str, float | int]:
        """The row of figures of :func:`tts_pipeline.benchmark.stats.summarize` for this run."""
        return summarize(self.latencies, self.audio_seconds_per_call(sampling_rate), self.batch_size, sampling_rate)


def benchmark(
    call: Callable[[Timer], CallResult],
    *,
    warmup: int,
    repeats: int,
    device: torch.device | str | None = None,
    clock: Clock = time.perf_counter,
) -> BenchmarkRun:
    """Call ``call(timer)`` ``warmup`` times untimed, then ``repeats`` times recording its components.

    Args:
        call: One inference call; wraps each component in ``with timer(name):`` and returns a
            :class:`CallResult`. Every call must time the same components.
        warmup: Untimed calls first (>= 0).
        repeats: Timed calls (>= 1).
        device: Where the models run; CUDA is synchronised around each timed region.
        clock: Seconds; :func:`time.perf_counter` unless a test scripts it.
    """
    if warmup < 0 or repeats < 1:
        raise ValueError(f"benchmark: expected warmup >= 0 and repeats >= 1, got {warmup} and {repeats}")
    timer = Timer(device, clock)
    for _ in range(warmup):
        _check_result(call(timer), "warm-up")
        timer.take()  # warm-up latencies are discarded
    run = BenchmarkRun()
    for _ in range(repeats):
        result = _check_result(call(timer), "timed")
        run.latencies.add(timer.take())
        run.calls.append(result)
    return run


def _check_result(result: object, which: str) -> CallResult:
    if not isinstance(result, CallResult):
        raise TypeError(f"benchmark: a {which} call returned {type(result).__name__}, expected CallResult")
    return result
