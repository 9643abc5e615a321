"""Mixed-precision training steps of HiFi-GAN and FastPitch through the trainers' own step functions,
fp16 gradient scaling when a gradient overflows, and TF32 on and off.

The states, runtimes and batches are built as ``bench-hifigan`` and ``bench-fastpitch`` build them
(tiny models, synthetic audio and utterances). An fp16 run skips its first steps as a matter of course:
the scaler starts at 2^16 and halves its scale at every overflow until the gradients fit. So every step
here is checked against the scaler's verdict (:func:`updated`), and "the step trained" means "some step
within :data:`MAX_STEPS` updated the weights". The overflow tests start from :data:`LOW_SCALE` instead,
so that only the overflow they inject can make a step skip.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import pytest
import torch
from torch import nn

from tts_pipeline.commands.bench_fastpitch import (
    PITCH_MEAN_HZ,
    PITCH_STD_HZ,
    BatchShape,
    optimiser_step,
    synthetic_batches,
)
from tts_pipeline.commands.hifigan_training_sides import OurTraining
from tts_pipeline.config import AudioConfig, FastPitchConfig, HiFiGANConfig
from tts_pipeline.models.fastpitch.data import FastPitchBatch, PitchStats
from tts_pipeline.precision import Precision, allow_tf32, resolve_precision
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.engine import RunningMeans, TrainingDiverged
from tts_pipeline.training.fastpitch import FastPitchState, Runtime, build_state, loss_names

from ..unit.test_training_bf16 import N_MELS, N_SYMBOLS, TINY_FASTPITCH, TINY_HIFIGAN
from . import on_cuda

AUDIO = AudioConfig()
HIFIGAN = HiFiGANConfig(**{**TINY_HIFIGAN, "segment_size": 1024, "batch_size": 1})
FASTPITCH = FastPitchConfig(**TINY_FASTPITCH)
UTTERANCES = BatchShape(tokens=(6, 10), frames=(20, 32))
# Each skipped step halves the scale: 16 of them take 2^16 down to 1, far below what tiny models need.
MAX_STEPS = 16
# Far below where the tiny models' fp16 gradients overflow: from the default 2^16 the scaler backs off by
# itself over the first steps, and now and then later.
LOW_SCALE = 2.0**4
COMPUTE_LAYERS = (nn.Conv1d, nn.Conv2d, nn.ConvTranspose1d, nn.Linear)

# (device, amp setting, dtype the convolutions and linear layers must run in)
AMP_CASES = [
    pytest.param("cpu", "bf16", torch.bfloat16, id="cpu-bf16"),
    pytest.param("cpu", "fp16", torch.float32, id="cpu-fp16"),  # fp16 is a CUDA mode: a CPU trains in float32
    on_cuda("cuda", "fp16", torch.float16, test_id="cuda-fp16"),
    on_cuda("cuda", "bf16", torch.bfloat16, test_id="cuda-bf16"),
]
DEVICES = ["cpu", on_cuda("cuda", test_id="cuda")]


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


def fp16(device: str) -> Precision:
    """fp16 with gradient scaling on ``device``.

    Training never resolves fp16 on a CPU (it trains in float32 there); the CPU value is made directly
    so that the scaler's code path (``GradScaler("cpu")``) runs in the default suite and proves the test.
    """
    if device == "cuda":
        return resolve_precision("fp16", torch.device("cuda"))
    return Precision("fp16", torch.device("cpu"), "built by the test: the scaler's path on the CPU")


def weights(module: nn.Module) -> list[torch.Tensor]:
    return [parameter.detach().clone() for parameter in module.parameters()]


def updated(before: list[torch.Tensor], module: nn.Module, scaler: torch.amp.GradScaler, scale: float) -> bool:
    """Whether the last step moved ``module``'s weights (``before`` them, at loss scale ``scale``).

    Asserts the scaler agrees: a step it skipped (it found an inf/NaN gradient) backed its scale off and
    left every weight as it was; any other step kept the scale and moved them. A disabled scaler never
    skips (its scale stays 1).
    """
    moved = any(not torch.equal(old, new) for old, new in zip(before, module.parameters(), strict=True))
    expected = scale if moved else scale * scaler.get_backoff_factor()
    assert scaler.get_scale() == expected, f"weights moved: {moved}; loss scale {scale} -> {scaler.get_scale()}"
    return moved


def lower_scale(scaler: torch.amp.GradScaler, device: str) -> None:
    """Set ``scaler``'s loss scale to :data:`LOW_SCALE`, so that only an injected overflow makes a step skip."""
    scaler.scale(torch.ones((), device=device))  # the scale tensor exists from the first use on
    scaler.update(new_scale=LOW_SCALE)


@contextlib.contextmanager
def inf_gradient(parameter: nn.Parameter) -> Iterator[None]:
    """In the block, the gradient reaching ``parameter`` is +inf everywhere (what an fp16 overflow gives)."""
    handle = parameter.register_hook(lambda grad: torch.full_like(grad, math.inf))
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def compute_dtypes(*modules: nn.Module) -> Iterator[set[tuple[torch.dtype | None, torch.dtype]]]:
    """``(autocast dtype, or None outside autocast; output dtype)`` of every convolution and linear
    layer of ``modules`` called in the block."""
    seen: set[tuple[torch.dtype | None, torch.dtype]] = set()

    def record(_layer: nn.Module, _inputs: object, output: torch.Tensor) -> None:
        device = output.device.type
        autocast = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else None
        seen.add((autocast, output.dtype))

    layers = [layer for module in modules for layer in module.modules() if isinstance(layer, COMPUTE_LAYERS)]
    handles = [layer.register_forward_hook(record) for layer in layers]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def assert_computed_in(seen: set[tuple[torch.dtype | None, torch.dtype]], expected: torch.dtype) -> None:
    """The layers ran under autocast to ``expected`` and produced it (a few stay float32 on purpose, e.g.
    the generator's last convolution); float32 means no autocast at all."""
    autocast = {dtype for dtype, _ in seen}
    outputs = {dtype for _, dtype in seen}
    if expected == torch.float32:
        assert autocast == {None} and outputs == {torch.float32}
    else:
        assert autocast - {None} == {expected}
        assert expected in outputs and outputs <= {expected, torch.float32}


def hifigan(precision: Precision) -> tuple[OurTraining, torch.Tensor]:
    """The trainer's HiFi-GAN state and runtime (tiny models) and one clip of audio on the device."""
    audio = 0.1 * torch.randn(HIFIGAN.batch_size, HIFIGAN.segment_size, generator=torch.Generator().manual_seed(0))
    return OurTraining.build(HIFIGAN, AUDIO, precision), audio.to(precision.device)


def hifigan_step(training: OurTraining, audio: torch.Tensor) -> tuple[dict[str, float], bool, bool]:
    """One adversarial step: its losses and whether it updated the generator and the discriminators."""
    state = training.state
    generator, discriminators = weights(state.generator), weights(state.discriminators)
    scale_g, scale_d = state.scaler_g.get_scale(), state.scaler_d.get_scale()
    losses = training.step(audio)
    return (
        losses,
        updated(generator, state.generator, state.scaler_g, scale_g),
        updated(discriminators, state.discriminators, state.scaler_d, scale_d),
    )


def fastpitch(precision: Precision) -> tuple[FastPitchState, Runtime, FastPitchBatch]:
    """The trainer's FastPitch state and runtime (tiny model) and a synthetic batch on the device."""
    state = build_state(FASTPITCH, N_SYMBOLS, N_MELS, PitchStats(PITCH_MEAN_HZ, PITCH_STD_HZ), precision)
    state.model.train()
    runtime = Runtime(DistributedContext(device=precision.device), precision, state.model, FASTPITCH, accumulation=1)
    (batch,) = synthetic_batches(
        1, 2, UTTERANCES, n_symbols=N_SYMBOLS, n_mels=N_MELS, energy=FASTPITCH.energy_conditioning, seed=0
    )
    return state, runtime, batch.to(precision.device)


def fastpitch_step(state: FastPitchState, runtime: Runtime, batch: FastPitchBatch) -> tuple[dict[str, float], bool]:
    """One optimiser step: its figures and whether it updated the weights."""
    before, scale = weights(state.model), state.scaler.get_scale()
    figures = optimiser_step(state, runtime, batch)
    return figures, updated(before, state.model, state.scaler, scale)


def finite_losses(figures: dict[str, float], names: tuple[str, ...]) -> bool:
    return all(math.isfinite(figures[name]) for name in names)


# --------------------------------------------------------------------------------------------------
# AMP steps
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("device", "amp", "expected"), AMP_CASES)
def test_an_amp_hifigan_step_trains_both_networks_in_the_autocast_dtype(device, amp, expected):
    precision = resolve_precision(amp, torch.device(device), key="hifigan.amp")
    training, audio = hifigan(precision)
    state = training.state
    assert state.scaler_g.is_enabled() == state.scaler_d.is_enabled() == (expected == torch.float16)
    trained = {"generator": False, "discriminators": False}
    with compute_dtypes(state.generator, state.discriminators) as seen:
        for _ in range(MAX_STEPS):
            losses, generator, discriminators = hifigan_step(training, audio)
            assert all(math.isfinite(value) for value in losses.values()), losses
            assert losses["loss_mel"] > 0 and losses["loss_discrim"] > 0
            trained["generator"] |= generator
            trained["discriminators"] |= discriminators
            if all(trained.values()):
                break
    assert trained == {"generator": True, "discriminators": True}
    assert_computed_in(seen, expected)
    assert all(parameter.dtype == torch.float32 for parameter in state.generator.parameters())


@pytest.mark.parametrize(("device", "amp", "expected"), AMP_CASES)
def test_an_amp_fastpitch_step_trains_in_the_autocast_dtype(device, amp, expected):
    precision = resolve_precision(amp, torch.device(device), key="fastpitch.amp")
    state, runtime, batch = fastpitch(precision)
    assert state.scaler.is_enabled() == (expected == torch.float16)
    names = loss_names(FASTPITCH.energy_conditioning)
    trained = False
    with compute_dtypes(state.model) as seen:
        for _ in range(MAX_STEPS):
            figures, trained = fastpitch_step(state, runtime, batch)
            assert finite_losses(figures, names) and figures["loss"] > 0, figures
            if trained:
                break
    assert trained
    assert math.isfinite(figures["grad_norm"]) and figures["grad_norm"] > 0
    assert_computed_in(seen, expected)


# --------------------------------------------------------------------------------------------------
# gradient overflow
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_an_fp16_fastpitch_step_whose_gradient_overflows_is_skipped_and_lowers_the_scale(device):
    state, runtime, batch = fastpitch(fp16(device))
    assert state.scaler.is_enabled()
    names = loss_names(FASTPITCH.energy_conditioning)
    lower_scale(state.scaler, device)

    with inf_gradient(next(state.model.parameters())):
        skipped, trained = fastpitch_step(state, runtime, batch)
    # No TrainingDiverged: with scaling on, the trainer leaves an overflow to the scaler, which skips the
    # update and halves its scale. The losses are finite; the overflowed gradient has no norm to report.
    assert not trained and state.scaler.get_scale() == LOW_SCALE / 2
    assert finite_losses(skipped, names) and "grad_norm" not in skipped

    applied, trained = fastpitch_step(state, runtime, batch)
    assert trained and state.scaler.get_scale() == LOW_SCALE / 2 and math.isfinite(applied["grad_norm"])
    # The loop's means over both steps: the losses of both, the gradient norm of the applied one (not inf).
    means = RunningMeans()
    means.add(skipped)
    means.add(applied)
    assert means.means()["grad_norm"] == applied["grad_norm"]
    assert means.means()["loss"] == pytest.approx((skipped["loss"] + applied["loss"]) / 2)


@pytest.mark.parametrize("device", DEVICES)
def test_an_fp16_hifigan_generator_overflow_skips_the_generator_update_only(device):
    training, audio = hifigan(fp16(device))
    state = training.state
    lower_scale(state.scaler_g, device)
    lower_scale(state.scaler_d, device)

    with inf_gradient(next(state.generator.parameters())):
        losses, generator, discriminators = hifigan_step(training, audio)
    # Each network has its own scaler: the discriminators' update of this step stands.
    assert (generator, discriminators) == (False, True)
    assert (state.scaler_g.get_scale(), state.scaler_d.get_scale()) == (LOW_SCALE / 2, LOW_SCALE)
    assert all(math.isfinite(value) for value in losses.values())

    _, generator, discriminators = hifigan_step(training, audio)
    assert generator and discriminators and state.scaler_g.get_scale() == LOW_SCALE / 2


@pytest.mark.parametrize(("device", "amp"), [("cpu", "fp16"), on_cuda("cuda", "bf16", test_id="cuda-bf16")])
def test_without_gradient_scaling_an_inf_gradient_stops_fastpitch_before_the_update(device, amp):
    state, runtime, batch = fastpitch(resolve_precision(amp, torch.device(device), key="fastpitch.amp"))
    assert not state.scaler.is_enabled()
    before = weights(state.model)
    with inf_gradient(next(state.model.parameters())), pytest.raises(TrainingDiverged, match=r"grad_norm (inf|nan)"):
        optimiser_step(state, runtime, batch)
    assert all(torch.equal(old, new) for old, new in zip(before, state.model.parameters(), strict=True))


# --------------------------------------------------------------------------------------------------
# TF32
# --------------------------------------------------------------------------------------------------


@pytest.fixture
def tf32_switches() -> Iterator[None]:
    """The process's TF32 switches, put back after the test whatever it sets."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_allow_tf32_sets_both_switches_and_returns_the_previous_pair(tf32_switches):
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = False, True  # torch's defaults
    assert allow_tf32(True) == (False, True)
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (True, True)
    assert allow_tf32(False) == (True, True)
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (False, False)
    previous = allow_tf32(True)
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (False, False)


@pytest.mark.parametrize("device", DEVICES)
def test_tf32_rounds_float32_matmuls_on_cuda_only_while_allowed(device, tf32_switches):
    generator = torch.Generator().manual_seed(0)
    a, b = (torch.randn(1024, 1024, generator=generator, dtype=torch.float64) for _ in range(2))
    reference = a @ b
    x, y = a.float().to(device), b.float().to(device)
    products = {}
    for name, enabled in (("strict", False), ("tf32", True), ("strict again", False)):
        allow_tf32(enabled)
        products[name] = (x @ y).cpu()
    error = {name: float((p.double() - reference).abs().max() / reference.abs().max()) for name, p in products.items()}
    # float32's 24-bit mantissa: about 3e-7 of the largest entry here.
    assert error["strict"] < 1e-5
    assert torch.equal(products["strict again"], products["strict"])
    if device == "cuda":
        # TF32 rounds the inputs to a 10-bit mantissa: about 3e-4 (rounded to nearest) to 7e-4 (truncated).
        assert error["tf32"] > 5e-5 and error["tf32"] > 20 * error["strict"], error
    else:
        assert torch.equal(products["tf32"], products["strict"])  # the switches are CUDA's; CPUs ignore them
