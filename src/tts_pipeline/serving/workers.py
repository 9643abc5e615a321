"""Bounded synthesis: a fixed pool of worker threads, an admission gate in front of it, and each
request's audio handed from its worker to the event loop chunk by chunk.

- The gate admits at most ``workers + queue`` requests at a time; one more is refused at once (the
  app answers 429) rather than waiting unseen in a socket backlog. Once closed (SIGTERM) it admits
  nothing (503) while the admitted requests finish.
- A request holds its slot while its synthesis runs or waits for a worker, and gives it back the
  moment its synthesis ends, was cancelled or failed; sending the audio already made to a slow
  client holds no slot.
- The engines release the GIL while they compute (ONNX Runtime, torch), so threads give real
  parallelism; the event loop only moves bytes.
- A worker puts chunks into its request's queue without waiting for the client, so a slow client
  never holds a worker; the queue holds at most one request's audio (bounded by ``--max-chars``).
- :meth:`ChunkStream.cancel` (a client gone) makes the worker stop after the chunk it is computing
  and closes the speaker's generator.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np


class Refused(Exception):
    """The gate admits no more: ``reason`` is ``"busy"`` (full) or ``"shutting_down"`` (closed)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class AdmissionGate:
    """Counts admitted requests against ``workers + queue``; thread-safe (workers give slots back)."""

    def __init__(self, workers: int, queue: int) -> None:
        if workers < 1 or queue < 0:
            raise ValueError(f"workers >= 1 and queue >= 0 expected, got workers={workers}, queue={queue}")
        self.workers, self.queue = workers, queue
        self._lock = threading.Lock()
        self._admitted = 0
        self._running = 0
        self._closed = False

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def admitted(self) -> int:
        """Requests admitted and not done synthesising (running or waiting)."""
        return self._admitted

    @property
    def waiting(self) -> int:
        """Admitted requests no worker has started yet."""
        with self._lock:
            return self._admitted - self._running

    def admit(self) -> None:
        """Take a slot, or raise :class:`Refused`."""
        with self._lock:
            if self._closed:
                raise Refused("shutting_down", "the server is shutting down; send the request to another instance")
            if self._admitted >= self.capacity:
                raise Refused(
                    "busy",
                    f"the server is busy: {self.workers} synthesis worker(s) and {self.queue} queued request(s) "
                    "are taken; retry after the Retry-After seconds",
                )
            self._admitted += 1

    def started(self) -> None:
        with self._lock:
            self._running += 1

    def release(self, started: bool) -> None:
        """Give a slot back (``started``: a worker had begun it)."""
        with self._lock:
            self._admitted -= 1
            if started:
                self._running -= 1

    def close(self) -> None:
        """Admit nothing more (called from a signal handler: it only sets a flag)."""
        self._closed = True


@dataclass
class _End:
    """The worker is done: ``error`` is what the speaker raised, if anything."""

    error: BaseException | None = None


class ChunkStream:
    """One request's audio chunks, produced by a worker thread, read by the event loop.

    ``async for chunk in stream`` yields the chunks in order and raises what the speaker raised (a
    :class:`tts_pipeline.errors.UserError` for bad text comes before any chunk).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[np.ndarray | _End] = asyncio.Queue()
        self._cancelled = threading.Event()
        self.future: Future[None] | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the synthesis (idempotent; nothing happens once it has ended). A request still waiting
        for a worker is dropped from the pool's queue and gives its slot back at once."""
        self._cancelled.set()
        if self.future is not None:
            self.future.cancel()

    def put(self, item: np.ndarray | _End) -> None:
        """Called from the worker thread."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the process is exiting
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def __aiter__(self) -> ChunkStream:
        return self

    async def __anext__(self) -> np.ndarray:
        item = await self._queue.get()
        if isinstance(item, _End):
            self._queue.put_nowait(item)  # any later read ends too
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return item


class SynthesisPool:
    """``workers`` threads behind an :class:`AdmissionGate` of ``workers + queue`` slots."""

    def __init__(self, workers: int, queue: int) -> None:
        self.gate = AdmissionGate(workers, queue)
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="synthesis")

    def stream(self, produce: Callable[[], Iterator[np.ndarray]]) -> ChunkStream:
        """Admit a request (:class:`Refused` when the gate says no) and run ``produce()`` (the
        speaker's chunk generator) on a worker; the chunks arrive through the returned stream."""
        self.gate.admit()
        stream = ChunkStream(asyncio.get_running_loop())
        try:
            future = self._executor.submit(self._work, produce, stream)
        except RuntimeError:  # the executor is shut down: the app is stopping
            self.gate.release(started=False)
            raise Refused("shutting_down", "the server is shutting down") from None
        stream.future = future
        future.add_done_callback(_release_if_never_started(self.gate))
        return stream

    def _work(self, produce: Callable[[], Iterator[np.ndarray]], stream: ChunkStream) -> None:
        self.gate.started()
        chunks: Any = None
        error: BaseException | None = None
        try:
            if stream.cancelled:
                return
            chunks = produce()
            for chunk in chunks:
                if stream.cancelled:
                    return
                stream.put(chunk)
        except Exception as caught:  # handed to the request; the worker lives on
            error = caught
        finally:
            if chunks is not None and hasattr(chunks, "close"):
                chunks.close()  # runs the generator's cleanup now, in this thread
            self.gate.release(started=True)
            stream.put(_End(error))

    def shutdown(self) -> None:
        """Drop queued work and wait for the running synthesis to end."""
        self.gate.close()
        self._executor.shutdown(wait=True, cancel_futures=True)


def _release_if_never_started(gate: AdmissionGate) -> Callable[[Future[None]], None]:
    """A done-callback giving the slot back for a request cancelled before a worker took it (a started
    one gives it back itself, when its work ends)."""

    def callback(future: Future[None]) -> None:
        if future.cancelled():
            gate.release(started=False)

    return callback
