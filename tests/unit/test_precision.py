"""The AMP policy shared by training and inference: fp16 CUDA-only with scaling, bf16 on CPUs and GPUs, auto."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

from tts_pipeline import precision as precision_module
from tts_pipeline.errors import UserError
from tts_pipeline.precision import Precision, cpu_bf16_instructions, resolve_precision


def test_fp16_is_float32_on_the_cpu_with_a_log_line(caplog):
    with caplog.at_level(logging.INFO):
        precision = resolve_precision("fp16", torch.device("cpu"), key="hifigan.amp")
    assert precision.amp == "off" and "hifigan.amp fp16 is a CUDA mode" in caplog.text
    assert not precision.grad_scaler().is_enabled()
    with precision.autocast():
        assert not torch.is_autocast_enabled("cpu")
    with pytest.raises(UserError, match="hifigan.amp"):
        resolve_precision("fp8", torch.device("cpu"), key="hifigan.amp")


@pytest.fixture
def cpu_flags(monkeypatch):
    """Pretend the CPU reports the given bf16 instructions."""

    def pretend(*flags: str) -> None:
        monkeypatch.setattr(precision_module, "cpu_bf16_instructions", lambda: flags)

    return pretend


def test_auto_picks_bf16_only_on_a_cpu_that_runs_it_natively(cpu_flags, caplog):
    cpu_flags("avx512_bf16")
    with caplog.at_level(logging.INFO):
        native = resolve_precision("auto", torch.device("cpu"), key="inference.amp")
    assert (native.amp, native.label, native.dtype) == ("bf16", "bf16", torch.bfloat16)
    assert "inference.amp: bf16 on cpu (auto: the CPU advertises bf16 instructions (avx512_bf16))" in caplog.text
    cpu_flags()
    plain = resolve_precision("auto", torch.device("cpu"), key="inference.amp")
    assert (plain.amp, plain.label, plain.dtype) == ("off", "fp32", torch.float32) and "no native bf16" in plain.reason


def test_bf16_on_a_cpu_autocasts_matmuls_and_keeps_fp32_regions(cpu_flags, caplog):
    cpu_flags()
    with caplog.at_level(logging.WARNING):
        precision = resolve_precision("bf16", torch.device("cpu"), key="fastpitch.amp")
    assert precision.amp == "bf16" and "fastpitch.amp is 'bf16' but this CPU has no native bf16" in caplog.text
    assert not precision.grad_scaler().is_enabled()
    layer = torch.nn.Linear(4, 4)
    with precision.autocast():
        assert layer(torch.randn(2, 4)).dtype == torch.bfloat16
        with precision.full_precision():
            assert layer(torch.randn(2, 4)).dtype == torch.float32


def test_cpu_bf16_instructions_are_read_from_the_cpu_flags():
    flags = cpu_bf16_instructions()
    assert set(flags) <= {"avx512_bf16", "amx_bf16", "bf16"} and list(flags) == sorted(flags)
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        reported = set(cpuinfo.read_text().split())
        assert bool(flags) == bool(reported & {"avx512_bf16", "amx_bf16", "bf16"})


def test_a_disabled_scaler_passes_losses_and_steps_through():
    parameter = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([parameter], lr=0.5)
    scaler = Precision("off", torch.device("cpu")).grad_scaler()
    loss = (parameter * 3).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    assert torch.allclose(parameter, torch.full((2,), -0.5)) and scaler.state_dict() == {}


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_fp16_on_cuda_autocasts_and_scales():
    precision = resolve_precision("fp16", torch.device("cuda"))
    assert precision.grad_scaler().is_enabled()
    with precision.autocast():
        out = torch.nn.Linear(4, 4).cuda()(torch.randn(2, 4, device="cuda"))
    assert out.dtype == torch.float16
    bf16 = resolve_precision("bf16", torch.device("cuda"))
    assert not bf16.grad_scaler().is_enabled()
