"""The AMP policy shared by training and inference: off on the CPU, fp16 scaling, bf16 without."""

from __future__ import annotations

import logging

import pytest
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.precision import Precision, resolve_precision


def test_amp_is_off_on_the_cpu_with_a_log_line(caplog):
    with caplog.at_level(logging.INFO):
        precision = resolve_precision("fp16", torch.device("cpu"), key="hifigan.amp")
    assert precision.amp == "off" and "hifigan.amp is 'fp16'" in caplog.text
    assert not precision.grad_scaler().is_enabled()
    with precision.autocast():
        assert not torch.is_autocast_enabled("cpu")
    with pytest.raises(UserError, match="hifigan.amp"):
        resolve_precision("fp8", torch.device("cpu"), key="hifigan.amp")


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
