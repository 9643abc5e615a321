"""torchrun environment, single-process context, resumable sampler, and two gloo processes under DDP
giving the same HiFi-GAN update as gradient accumulation in one process."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from tts_pipeline.config import HiFiGANConfig
from tts_pipeline.data.manifest import manifest_path, read_manifest
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan.data import AudioSegments
from tts_pipeline.training import distributed
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext, ResumableSampler

from ..stages.test_train_hifigan import AUDIO, TINY, make_corpus

TORCHRUN = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}


def test_torchrun_environment_is_read_or_absent():
    assert distributed.torchrun_environment({}) is None
    env = distributed.torchrun_environment(TORCHRUN)
    assert (env.rank, env.local_rank, env.world_size) == (1, 1, 2)
    with pytest.raises(UserError, match=r"\['LOCAL_RANK'\] are not"):
        distributed.torchrun_environment({"RANK": "0", "WORLD_SIZE": "1"})
    with pytest.raises(UserError, match="integers"):
        distributed.torchrun_environment({**TORCHRUN, "RANK": "x"})
    with pytest.raises(UserError, match="inconsistent"):
        distributed.torchrun_environment({**TORCHRUN, "RANK": "2"})


def test_a_single_process_needs_no_process_group():
    context = distributed.init_distributed(0, environ={})
    assert context.is_main and not context.is_distributed and context.world_size == 1
    assert context.device == torch.device("cpu") and context.backend is None
    context.barrier()
    assert context.sum_floats([1.5, 2.0]) == [1.5, 2.0] and context.mean_floats([3.0]) == [3.0]
    module = torch.nn.Linear(2, 2)
    assert context.wrap(module) is module
    assert context.shard(5) == [0, 1, 2, 3, 4]
    # torchrun with one process is a single process too
    single = distributed.init_distributed(0, environ={"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"})
    assert single.backend is None


def test_gpus_without_cuda_fall_back_to_the_cpu(caplog, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with caplog.at_level(logging.WARNING):
        device = distributed.choose_device(2, what="hifigan.gpus")
    assert device == torch.device("cpu") and "hifigan.gpus is 2" in caplog.text


def test_several_processes_need_a_rendezvous_address():
    with pytest.raises(UserError, match="MASTER_ADDR"):
        distributed.init_distributed(0, environ=TORCHRUN)


def test_the_sampler_splits_one_permutation_whatever_the_process_count():
    items = list(range(10))
    single = ResumableSampler(items, num_replicas=1, rank=0, seed=3)
    pair = [ResumableSampler(items, num_replicas=2, rank=r, seed=3) for r in (0, 1)]
    for sampler in (single, *pair):
        sampler.set_position(epoch=2)
    order = list(single)
    assert sorted(order) == items
    assert list(pair[0]) == order[0::2] and list(pair[1]) == order[1::2]
    single.set_position(epoch=2, skip=4)
    assert list(single) == order[4:] and len(single) == 6
    single.set_position(epoch=3)
    assert list(single) != order
    uneven = ResumableSampler(list(range(7)), num_replicas=2, rank=1, seed=0)
    assert len(uneven) == 3  # the tail is dropped: equal shares
    with pytest.raises(ValueError, match="skip"):
        single.set_position(epoch=1, skip=11)


# --------------------------------------------------------------------------------------------------
# two processes
# --------------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _join(rank: int, world: int, port: int) -> DistributedContext:
    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    torch.set_num_threads(1)
    return distributed.init_distributed(0)


def _hifigan_config(global_batch: int, batch: int) -> HiFiGANConfig:
    return HiFiGANConfig(**{**TINY, "global_batch_size": global_batch, "batch_size": batch, "max_steps": 2})


def _train(root: Path, context: DistributedContext, cfg: HiFiGANConfig, name: str) -> None:
    from tts_pipeline.training.hifigan import fit
    from tts_pipeline.training.loop import LoopIO

    records = read_manifest(manifest_path(root / "data", "train"))
    # Fixed crops: both set-ups must see the same samples of the same items.
    train_set = AudioSegments(records, AUDIO, cfg.segment_size, fixed_segments_seed=11)
    fit(cfg, AUDIO, train_set, None, LoopIO(CheckpointManager(root / name, "h"), context))


def _ddp_worker(rank: int, world: int, port: int, root: str) -> None:
    context = _join(rank, world, port)
    try:
        assert context.backend == "gloo" and context.is_distributed
        assert context.sum_floats([rank + 1.0]) == [3.0] and context.mean_floats([2.0 * rank]) == [1.0]
        context.barrier()
        _train(Path(root), context, _hifigan_config(global_batch=8, batch=4), "ddp")
        # DDP and accumulation together: 2 micro-batches of 2 per process.
        _train(Path(root), context, _hifigan_config(global_batch=8, batch=2), "ddp_accumulating")
    finally:
        distributed.cleanup(context)


@pytest.mark.slow
def test_two_ddp_processes_update_like_accumulation_in_one(tmp_path):
    torch.set_num_threads(1)
    make_corpus(tmp_path)
    # One process: 4 micro-batches of 2 per step (the 8 items are one global batch).
    _train(tmp_path, DistributedContext(), _hifigan_config(global_batch=8, batch=2), "single")
    # Two gloo processes: 1 micro-batch of 4 each per step, then 2 micro-batches of 2.
    mp.start_processes(_ddp_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, start_method="spawn")

    single = CheckpointManager(tmp_path / "single", "h").latest()
    assert single.step == 2 and single.extra["accumulation"] == 4
    for name, accumulation in (("ddp", 1), ("ddp_accumulating", 2)):
        ddp = CheckpointManager(tmp_path / name, "h").latest()
        assert ddp.step == 2 and ddp.extra["accumulation"] == accumulation and ddp.extra["world_size"] == 2
        _assert_same_update(single, ddp)
    # Training moved the weights, so the comparison means something.
    from tts_pipeline.training.hifigan import build_models

    initial, _ = build_models(_hifigan_config(8, 2), AUDIO.n_mel_channels, torch.device("cpu"))
    moved = [n for n, t in initial.state_dict().items() if not torch.allclose(t, single.states["generator"][n])]
    assert len(moved) > 10


def _assert_same_update(single: Checkpoint, ddp: Checkpoint) -> None:
    # AdamW divides by the root of the gradient's second moment, which amplifies float-level
    # differences (summation order) on the few elements whose gradients nearly cancel between the
    # two steps; a wrong update would differ by about the learning rate (3e-4) nearly everywhere.
    lr = _hifigan_config(8, 2).learning_rate
    for family in ("generator", "mpd", "msd"):
        names = [name for name, tensor in single.states[family].items() if tensor.is_floating_point()]
        assert names
        diffs = torch.cat([(single.states[family][n] - ddp.states[family][n]).abs().flatten() for n in names])
        assert diffs.max() < lr / 10, family
        assert (diffs > 1e-6).float().mean() < 0.02, family
    # Adam is blind to a constant gradient scale (a missing 1/k would not show in the weights), so
    # compare the moments themselves: running means of the gradients and of their squares.
    for optimizer in ("optim_g", "optim_d"):
        ours, theirs = single.states[optimizer]["state"], ddp.states[optimizer]["state"]
        assert ours.keys() == theirs.keys()
        for moment in ("exp_avg", "exp_avg_sq"):
            a = torch.cat([ours[index][moment].flatten() for index in ours])
            b = torch.cat([theirs[index][moment].flatten() for index in ours])
            assert (a - b).abs().max() <= 1e-4 * b.abs().max(), f"{optimizer}.{moment}"
