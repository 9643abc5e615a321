"""Multi-process training: the torchrun environment, the process group, the device of each rank.

A GPU stage is launched as ``torchrun --standalone --nproc_per_node=N -m tts_pipeline <stage> ...``
inside a GPU lease (``CUDA_VISIBLE_DEVICES`` holds exactly the N leased devices), or as one plain
process on the CPU. :func:`init_distributed` reads what torchrun exported (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``) and returns a :class:`DistributedContext`:

- several processes: a process group (NCCL on CUDA, gloo on the CPU) and ``cuda:<LOCAL_RANK>``, the
  local rank indexing the leased devices;
- one process (no torchrun, or torchrun with one process): no process group at all; every
  collective of the context is then the identity, so trainers call them unconditionally.

``gpus: 0`` (or no CUDA device) means the CPU, whatever torchrun says.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as torch_dist
from torch import nn
from torch.utils.data import Dataset, DistributedSampler

from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
# NCCL/gloo's default is 30 minutes; a validation or sample pass on rank 0 never takes that long,
# so a peer stuck for longer is a hang worth failing on.
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


@dataclass(frozen=True)
class TorchrunEnvironment:
    """What torchrun tells each process it starts."""

    rank: int
    local_rank: int
    world_size: int


def torchrun_environment(environ: Mapping[str, str] | None = None) -> TorchrunEnvironment | None:
    """The torchrun variables of this process, or None when it was not started by torchrun.

    Raises UserError when they are only partly set or not integers.
    """
    env = os.environ if environ is None else environ
    present = [name for name in TORCHRUN_VARIABLES if name in env]
    if not present:
        return None
    if len(present) != len(TORCHRUN_VARIABLES):
        missing = [name for name in TORCHRUN_VARIABLES if name not in env]
        raise UserError(f"torchrun environment: {present} are set but {missing} are not (launch with torchrun)")
    try:
        values = {name: int(env[name]) for name in TORCHRUN_VARIABLES}
    except ValueError:
        shown = {name: env[name] for name in TORCHRUN_VARIABLES}
        raise UserError(f"torchrun environment: expected integers, got {shown}") from None
    result = TorchrunEnvironment(rank=values["RANK"], local_rank=values["LOCAL_RANK"], world_size=values["WORLD_SIZE"])
    if result.world_size < 1 or not 0 <= result.rank < result.world_size or result.local_rank < 0:
        raise UserError(f"torchrun environment: inconsistent values {result}")
    return result


def choose_device(gpus: int, local_rank: int = 0, *, what: str = "gpus") -> torch.device:
    """``cuda:<local_rank>`` when GPUs are asked for and visible, else the CPU (with a warning if asked).

    Args:
        gpus: GPUs the stage was asked to use; 0 = CPU.
        local_rank: This process's index among the processes of its machine.
        what: Config key named in the warning.
    """
    if gpus <= 0:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        log.warning("%s is %s but no CUDA device is visible; training on the CPU", what, gpus)
        return torch.device("cpu")
    count = torch.cuda.device_count()
    if local_rank >= count:
        raise UserError(
            f"local rank {local_rank} has no GPU: only {count} visible (CUDA_VISIBLE_DEVICES="
            f"{os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')}); start one process per leased GPU"
        )
    return torch.device("cuda", local_rank)


@dataclass
class DistributedContext:
    """This process's place in the job and the collectives trainers use.

    Attributes:
        rank: Global rank (0 in a single process).
        local_rank: Rank on this machine.
        world_size: Number of processes.
        device: Where this process computes.
        backend: ``"nccl"`` / ``"gloo"`` when a process group was created by :func:`init_distributed`,
            None in a single process.
    """

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    backend: str | None = None

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that logs, writes checkpoints and output files."""
        return self.rank == 0

    @property
    def is_distributed(self) -> bool:
        """Whether a process group connects several processes."""
        return self.backend is not None and self.world_size > 1

    def barrier(self) -> None:
        """Wait for every process (no-op in a single process)."""
        if self.is_distributed:
            if self.backend == "nccl":
                torch_dist.barrier(device_ids=[self.device.index])
            else:
                torch_dist.barrier()

    def all_reduce_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum ``tensor`` over processes, in place; returns it (unchanged in a single process)."""
        if self.is_distributed:
            torch_dist.all_reduce(tensor, op=torch_dist.ReduceOp.SUM)
        return tensor

    def sum_floats(self, values: Sequence[float]) -> list[float]:
        """Element-wise sum over processes of a few host numbers (float64 on the wire)."""
        if not self.is_distributed:
            return [float(value) for value in values]
        tensor = torch.tensor(list(values), dtype=torch.float64, device=self.device)
        return self.all_reduce_sum(tensor).tolist()

    def mean_floats(self, values: Sequence[float]) -> list[float]:
        """Element-wise mean over processes of a few host numbers."""
        return [value / self.world_size for value in self.sum_floats(values)]

    def wrap(self, module: nn.Module, **ddp_options: Any) -> nn.Module:
        """``module`` inside DistributedDataParallel when several processes train, else itself.

        The module must already be on :attr:`device`; DDP copies rank 0's parameters and buffers to
        every rank here, so all ranks start from the same weights.
        """
        if not self.is_distributed:
            return module
        from torch.nn.parallel import DistributedDataParallel

        device_ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(module, device_ids=device_ids, **ddp_options)

    def sampler(
        self, dataset: Dataset[Any], *, seed: int, shuffle: bool = True, buckets: LengthBuckets | None = None
    ) -> ResumableSampler:
        """This rank's share of ``dataset`` (see :class:`ResumableSampler`), grouped by length if ``buckets``."""
        return ResumableSampler(
            dataset, num_replicas=self.world_size, rank=self.rank, seed=seed, shuffle=shuffle, buckets=buckets
        )

    def shard(self, n_items: int) -> list[int]:
        """Indices ``rank, rank + world, ...`` of ``n_items``: an exact split with no padding (validation)."""
        return list(range(self.rank, n_items, self.world_size))


def no_sync(module: nn.Module, skip_sync: bool) -> contextlib.AbstractContextManager[Any]:
    """DDP's ``no_sync`` when asked and ``module`` is DDP-wrapped (see :meth:`DistributedContext.wrap`);
    nothing otherwise.

    Gradient accumulation backpropagates several micro-batches per optimiser step; only the last
    backward needs to all-reduce, so the others run under ``no_sync``.
    """
    if skip_sync and hasattr(module, "no_sync"):
        return module.no_sync()
    return contextlib.nullcontext()


@dataclass(frozen=True)
class LengthBuckets:
    """How :class:`ResumableSampler` groups items of similar length (see :func:`bucketed_order`).

    Attributes:
        lengths: The length of every dataset item (e.g. mel frames), in dataset order.
        group_size: Items trained on together: the global batch (all processes' micro-batches of one
            optimiser step).
        pool: How many groups' worth of items are sorted by length together. Bigger pools give groups
            of more uniform length (less padding) but less random company: a pool as large as the
            epoch puts nearly the same items together every epoch.
    """

    lengths: Sequence[int]
    group_size: int
    pool: int

    def __post_init__(self) -> None:
        if self.group_size < 1 or self.pool < 1:
            raise ValueError(
                f"length buckets: expected positive group_size and pool, got {self.group_size}, {self.pool}"
            )


def bucketed_order(
    order: Sequence[int], lengths: Sequence[int], group_size: int, pool: int, generator: torch.Generator
) -> list[int]:
    """``order`` rearranged so that every ``group_size`` consecutive items have similar lengths.

    The last ``len(order) % group_size`` items stay last and as they are: the remainder a full-batch
    loader drops, the same items it would drop from ``order`` itself. The rest is cut into pools of
    ``pool x group_size`` consecutive items; each pool is sorted by length (a stable sort, so equal
    lengths keep their random order) and cut into groups; the groups of all pools are shuffled with
    ``generator``. So every item of ``order`` appears exactly once, and the full groups are exactly as
    many as ``order`` holds (``len(order) // group_size``): bucketing costs no step.

    Args:
        order: Item indices, already shuffled.
        lengths: Length of each item, indexed by item index.
        group_size: Items per group.
        pool: Groups per pool.
        generator: Draws the order of the groups.
    """
    n_full = len(order) - len(order) % group_size
    pool_items = pool * group_size
    groups: list[list[int]] = []
    for start in range(0, n_full, pool_items):
        ranked = sorted(order[start : min(start + pool_items, n_full)], key=lambda index: lengths[index])
        groups.extend(ranked[first : first + group_size] for first in range(0, len(ranked), group_size))
    shuffled = torch.randperm(len(groups), generator=generator).tolist()
    return [index for group in shuffled for index in groups[group]] + list(order[n_full:])


class ResumableSampler(DistributedSampler):
    """DistributedSampler (shuffled by ``seed + epoch``, tail dropped so ranks get equal shares) that
    can start an epoch part-way, for a run resumed in the middle of an epoch.

    The permutation does not depend on the number of processes: optimiser step ``s`` of an epoch
    covers positions ``[s * G, (s + 1) * G)`` of it (``G`` the global batch) whether one process
    accumulates them or ``G / batch`` processes share them.

    With ``buckets`` (length bucketing, off by default as in NVIDIA's loaders) the epoch's permutation
    is rearranged by :func:`bucketed_order` into groups of ``buckets.group_size`` (the global batch) of
    similar length before the ranks take their shares, so each micro-batch pads little. Everything
    above still holds: the order depends on ``(seed, epoch)`` only, every rank computes the same one,
    the same items as without bucketing are trained on per epoch, and the number of full global
    batches is unchanged; ``skip`` still lands on the items an uninterrupted epoch would have reached.
    """

    def __init__(
        self,
        dataset: Dataset[Any],
        *,
        num_replicas: int,
        rank: int,
        seed: int,
        shuffle: bool = True,
        buckets: LengthBuckets | None = None,
    ) -> None:
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=True)
        self.skip = 0
        if buckets is not None:
            n_items = len(dataset)  # type: ignore[arg-type]
            if len(buckets.lengths) != n_items:
                raise ValueError(f"length buckets: {len(buckets.lengths)} lengths for {n_items} items")
            if buckets.group_size % num_replicas:
                raise ValueError(
                    f"length buckets: groups of {buckets.group_size} items do not split over {num_replicas} processes"
                )
            if not shuffle:
                raise ValueError("length buckets need a shuffled sampler (the groups are shuffled)")
        self.buckets = buckets

    def set_position(self, epoch: int, skip: int = 0) -> None:
        """Iterate epoch ``epoch`` from this rank's ``skip``-th index on."""
        if not 0 <= skip <= self.num_samples:
            raise ValueError(f"skip: expected 0..{self.num_samples}, got {skip}")
        self.set_epoch(epoch)
        self.skip = int(skip)

    def __iter__(self) -> Iterator[int]:
        if self.buckets is None:
            indices = list(super().__iter__())
        else:
            # DistributedSampler's permutation (same generator and seed), regrouped, then this rank's share.
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            order = torch.randperm(len(self.dataset), generator=generator).tolist()[: self.total_size]  # type: ignore[arg-type]
            buckets = self.buckets
            grouped = bucketed_order(order, buckets.lengths, buckets.group_size, buckets.pool, generator)
            indices = grouped[self.rank : self.total_size : self.num_replicas]
        return iter(indices[self.skip :])

    def __len__(self) -> int:
        return self.num_samples - self.skip


def init_distributed(
    gpus: int,
    *,
    environ: Mapping[str, str] | None = None,
    what: str = "gpus",
    timeout: datetime.timedelta = DEFAULT_TIMEOUT,
) -> DistributedContext:
    """Join the job this process belongs to (see the module docstring).

    Args:
        gpus: The stage's GPU setting; 0 = CPU even under torchrun (gloo).
        environ: Environment to read (default ``os.environ``).
        what: Config key named in messages.
        timeout: How long collectives wait for a peer.
    """
    env = os.environ if environ is None else environ
    launch = torchrun_environment(env)
    if launch is None or launch.world_size == 1:
        local_rank = launch.local_rank if launch else 0
        return DistributedContext(device=choose_device(gpus, local_rank, what=what))

    device = choose_device(gpus, launch.local_rank, what=what)
    backend = "nccl" if device.type == "cuda" else "gloo"
    missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not env.get(name)]
    if missing:
        raise UserError(f"torchrun environment: {missing} not set (launch with torchrun)")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not torch_dist.is_initialized():
        kwargs: dict[str, Any] = {}
        if device.type == "cuda":
            kwargs["device_id"] = device  # binds the communicator to this rank's GPU up front
        torch_dist.init_process_group(
            backend, init_method="env://", rank=launch.rank, world_size=launch.world_size, timeout=timeout, **kwargs
        )
    log.info("rank %d/%d on %s (%s)", launch.rank, launch.world_size, device, backend)
    return DistributedContext(
        rank=launch.rank, local_rank=launch.local_rank, world_size=launch.world_size, device=device, backend=backend
    )


def cleanup(context: DistributedContext) -> None:
    """Leave the process group created by :func:`init_distributed` (no-op in a single process)."""
    if context.backend is not None and torch_dist.is_initialized():
        torch_dist.destroy_process_group()


@contextlib.contextmanager
def distributed_session(gpus: int, **options: Any) -> Iterator[DistributedContext]:
    """:func:`init_distributed` for the block, :func:`cleanup` after it (also on errors)."""
    context = init_distributed(gpus, **options)
    try:
        yield context
    finally:
        cleanup(context)
