"""Length bucketing in ResumableSampler: every item once per epoch, homogeneous batches, the same full
global batches as without bucketing, deterministic per (seed, epoch), resumable, independent of the
process count; and without buckets the sampler is DistributedSampler's order exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler

from tts_pipeline.training.distributed import LengthBuckets, ResumableSampler, bucketed_order
from tts_pipeline.training.engine import grouped

# A skewed length list like a speech corpus: many short items, a long tail (30-1200 frames).
LENGTHS = np.clip(np.random.default_rng(7).lognormal(5.5, 0.6, 203), 30, 1200).astype(int).tolist()


def sampler(world: int = 1, rank: int = 0, *, group: int = 8, pool: int | None = 4, seed: int = 5) -> ResumableSampler:
    buckets = None if pool is None else LengthBuckets(LENGTHS, group_size=group, pool=pool)
    return ResumableSampler(LENGTHS, num_replicas=world, rank=rank, seed=seed, buckets=buckets)


def epoch(s: ResumableSampler, number: int, skip: int = 0) -> list[int]:
    s.set_position(number, skip=skip)
    return list(s)


def real_fraction(order: list[int], batch: int) -> float:
    """Real / padded frames of the full batches of ``order``."""
    batches = [order[start : start + batch] for start in range(0, len(order) - batch + 1, batch)]
    real = sum(LENGTHS[index] for chunk in batches for index in chunk)
    return real / sum(batch * max(LENGTHS[index] for index in chunk) for chunk in batches)


def test_without_buckets_the_order_is_distributed_samplers():
    for world, rank in ((1, 0), (3, 2)):
        reference = DistributedSampler(LENGTHS, num_replicas=world, rank=rank, shuffle=True, seed=5, drop_last=True)
        reference.set_epoch(4)
        assert epoch(sampler(world, rank, pool=None), 4) == list(reference)


def test_every_item_once_and_the_same_items_and_full_batches_as_without_buckets():
    world, group = 2, 8
    plain = [epoch(sampler(world, rank, pool=None), 3) for rank in range(world)]
    shares = [epoch(sampler(world, rank, group=group), 3) for rank in range(world)]
    every = [index for share in shares for index in share]
    assert len(every) == len(set(every)) == world * (len(LENGTHS) // world)  # 202 of 203: DistributedSampler's tail
    assert all(len(share) == len(plain_share) for share, plain_share in zip(shares, plain, strict=True))
    # The global remainder (202 % 8 = 2 items) is the one random batches leave out as well, so the full
    # global batches are as many and hold the same items.
    full = len(every) // group * (group // world)
    assert sorted(i for share in shares for i in share[:full]) == sorted(i for share in plain for i in share[:full])
    assert [share[full:] for share in shares] == [share[full:] for share in plain]


def test_bucketed_batches_pad_far_less_than_random_ones():
    random = np.mean([real_fraction(epoch(sampler(pool=None), number), 8) for number in range(1, 6)])
    small = np.mean([real_fraction(epoch(sampler(pool=4), number), 8) for number in range(1, 6)])
    whole = np.mean([real_fraction(epoch(sampler(pool=50), number), 8) for number in range(1, 6)])
    assert random < 0.6 and small > random + 0.15 and whole > 0.9


def test_the_order_changes_with_the_epoch_and_repeats_for_the_same_seed_and_epoch():
    first, second = epoch(sampler(), 1), epoch(sampler(), 2)
    full = len(LENGTHS) // 8 * 8
    assert first != second and set(first[:full]) != set(second[:full])  # another remainder left out, too
    assert epoch(sampler(), 1) == first  # a fresh sampler (a resumed job) draws the same
    assert epoch(sampler(seed=6), 1) != first
    later = sampler()
    epoch(later, 7)
    assert epoch(later, 1) == first


def test_resuming_with_skip_gives_the_rest_of_the_epoch():
    for world, rank in ((1, 0), (2, 1)):
        whole = epoch(sampler(world, rank), 2)
        resumed = sampler(world, rank)
        assert epoch(resumed, 2, skip=24) == whole[24:] and len(resumed) == len(whole) - 24


def test_a_step_holds_the_same_items_whatever_the_process_count():
    """1 process x 4 micro-batches of 2 = 2 processes x 2 micro-batches of 2 = 4 processes x 1: the
    groups are global batches, so each optimiser step trains on the same utterances."""
    group, batch = 8, 2
    steps: dict[int, list[set[int]]] = {}
    for world in (1, 2, 4):
        per_step = group // world
        shares = [epoch(sampler(world, rank, group=group), 3) for rank in range(world)]
        n_steps = len(shares[0]) // per_step
        steps[world] = [
            {i for share in shares for i in share[s * per_step : (s + 1) * per_step]} for s in range(n_steps)
        ]
    assert steps[1] == steps[2] == steps[4] and len(steps[1]) == len(LENGTHS) // group
    # Micro-batches of one process are runs of the sorted group: each is length-homogeneous.
    loader = DataLoader(LENGTHS, batch_size=batch, sampler=sampler(1, 0, group=group, pool=50), drop_last=True)
    micro = [chunk for step in grouped(loader, group // batch) for chunk in step]
    spread = [int(chunk.max() - chunk.min()) for chunk in micro]
    assert np.median(spread) < 10


def test_the_loader_yields_the_full_steps_the_loop_counts():
    """EpochLoop's steps_per_epoch = len(sampler) // batch // k: that many full steps come out."""
    group, batch, world = 16, 4, 2
    k = group // (batch * world)
    s = sampler(world, 1, group=group, pool=3)
    s.set_position(1)
    steps_per_epoch = len(s) // batch // k
    loader = DataLoader(LENGTHS, batch_size=batch, sampler=s, drop_last=True)
    steps = list(grouped(loader, k))
    assert len(steps) >= steps_per_epoch == len(LENGTHS) // group


def test_bucketed_order_keeps_the_remainder_last_and_sorts_within_pools():
    lengths = [9, 1, 8, 2, 7, 3, 6, 4, 5, 0, 10]
    order = list(range(11))
    result = bucketed_order(order, lengths, group_size=2, pool=2, generator=torch.Generator().manual_seed(0))
    assert result[-1] == 10 and sorted(result) == order
    groups = {tuple(result[start : start + 2]) for start in range(0, 10, 2)}
    # pools of 4: items 0-3 (lengths 9 1 8 2), 4-7 (7 3 6 4), then 8-9 (5 0)
    assert groups == {(1, 3), (2, 0), (5, 7), (6, 4), (9, 8)}


def test_bad_buckets_are_refused():
    with pytest.raises(ValueError, match="lengths for"):
        ResumableSampler(LENGTHS[:-1] + [1, 2], num_replicas=1, rank=0, seed=0, buckets=LengthBuckets(LENGTHS, 8, 2))
    with pytest.raises(ValueError, match="do not split over 3 processes"):
        sampler(3, 0, group=8)
    with pytest.raises(ValueError, match="positive"):
        LengthBuckets(LENGTHS, 8, 0)
