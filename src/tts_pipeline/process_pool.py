"""Process pools for CPU work that holds the interpreter (FFTs, speech decoding): one single-threaded
worker per core.

Workers start by ``spawn``: the parent holds torch's thread pools, which a forked child must not
inherit. Each worker then limits its numeric libraries (OpenBLAS, OpenMP, torch) to one thread: they
start one per core, so ``n`` workers would run ``n x cores`` threads on ``cores`` cores, and
OpenBLAS's threads spin between calls, taking the cores from the other workers (Griffin-Lim in two such
workers on 2 cores ran 1.7x slower than in two single-threaded ones).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

MIN_ITEMS_PER_WORKER = 8
"""A spawned worker takes 2-4 s to start (it imports torch and librosa, and may build a model): with fewer
items than this per worker, one process finishes first."""


def worth_a_pool(n_items: int, workers: int) -> bool:
    """Whether ``n_items`` items are worth ``workers`` processes (:data:`MIN_ITEMS_PER_WORKER`)."""
    return workers > 1 and n_items >= MIN_ITEMS_PER_WORKER * workers


def process_pool(
    workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned, single-threaded processes; ``initializer(*initargs)`` runs in each
    after the thread limits (e.g. to build a per-worker model once)."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(initializer, initargs),
    )


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    # A spawned worker has imported only what the parent's main module imports (a console script: next to
    # nothing). The variables set the thread count of the numeric libraries loaded from here on; the
    # limits below, that of those already loaded (the main module may have imported numpy). threadpoolctl
    # alone would miss the ones loaded later: measured, Griffin-Lim ran 1.8x slower so.
    os.environ.update(dict.fromkeys(_THREAD_VARIABLES, "1"))
    import numpy  # noqa: F401  (loads OpenBLAS under the variables, for the limits to find it)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    try:
        import torch
    except ImportError:
        pass
    else:
        torch.set_num_threads(1)
    if initializer is not None:
        initializer(*initargs)
