"""Checks of what only a CUDA device exercises (autocast on the GPU, fp16 gradient scaling, TF32,
NCCL, leasing real devices), each also run on the CPU where its logic means something there.

The checks are parametrised over devices: the ``cpu`` values run in the default suite and prove that
the test code itself works; the values made with :func:`on_cuda` are marked ``gpu`` and skipped
without a CUDA device.
"""

from __future__ import annotations

import pytest
import torch

CUDA_MARKS = (
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
)


def on_cuda(*values: object, test_id: str | None = None) -> object:
    """A ``pytest.param`` of ``values`` that runs only on a CUDA device (marked ``gpu``)."""
    return pytest.param(*values, marks=CUDA_MARKS, id=test_id)
