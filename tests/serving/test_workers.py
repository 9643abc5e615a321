"""The synthesis pool: the admission gate's bound, chunks handed over in order, errors passed on, and a
cancelled request stopping its worker and giving its slot back (a client that left)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from tts_pipeline.errors import UserError
from tts_pipeline.serving.workers import AdmissionGate, Refused, SynthesisPool


def test_the_gate_admits_workers_plus_queue_then_refuses():
    gate = AdmissionGate(workers=2, queue=1)
    for _ in range(3):
        gate.admit()
    with pytest.raises(Refused) as refused:
        gate.admit()
    assert refused.value.reason == "busy" and "2 synthesis worker(s) and 1 queued" in str(refused.value)
    gate.release(started=False)
    gate.admit()
    gate.close()
    gate.release(started=False)
    with pytest.raises(Refused) as refused:
        gate.admit()
    assert refused.value.reason == "shutting_down"


def test_the_gate_refuses_a_pool_without_workers():
    with pytest.raises(ValueError, match="workers >= 1"):
        AdmissionGate(workers=0, queue=4)


class Chunks:
    """A speaker's generator under the test's control: chunk ``i`` waits for ``allow[i]``; it records
    how many chunks it made and whether it was closed."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.allow = [threading.Event() for _ in range(n)]
        self.made = 0
        self.closed = threading.Event()
        self.fail_at = fail_at

    def __call__(self):
        try:
            for index, event in enumerate(self.allow):
                assert event.wait(10), "the test never let this chunk go"
                if index == self.fail_at:
                    raise UserError("input: no symbol for '~'")
                self.made += 1
                yield np.full(4, index, dtype=np.float32)
        finally:
            self.closed.set()


def test_chunks_arrive_in_order_and_the_slot_comes_back():
    async def scenario():
        pool = SynthesisPool(workers=1, queue=0)
        chunks = Chunks(3)
        for event in chunks.allow:
            event.set()
        stream = pool.stream(chunks)
        got = [chunk[0] async for chunk in stream]
        assert got == [0, 1, 2]
        assert pool.gate.admitted == 0 and pool.gate.waiting == 0
        pool.shutdown()

    asyncio.run(scenario())


def test_an_error_reaches_the_reader_and_frees_the_worker():
    async def scenario():
        pool = SynthesisPool(workers=1, queue=0)
        chunks = Chunks(2, fail_at=0)
        chunks.allow[0].set()
        with pytest.raises(UserError, match="no symbol"):
            await anext(pool.stream(chunks))
        await asyncio.sleep(0.05)
        assert pool.gate.admitted == 0
        pool.shutdown()

    asyncio.run(scenario())


def test_a_cancelled_request_stops_its_synthesis_and_frees_its_slot():
    async def scenario():
        pool = SynthesisPool(workers=1, queue=1)
        running, queued = Chunks(100), Chunks(1)
        running.allow[0].set()
        first = pool.stream(running)
        second = pool.stream(queued)  # waits for the one worker
        assert (await anext(first))[0] == 0
        assert pool.gate.admitted == 2 and pool.gate.waiting == 1
        with pytest.raises(Refused):
            pool.stream(Chunks(1))

        second.cancel()  # never started: dropped from the queue at once
        assert pool.gate.admitted == 1 and pool.gate.waiting == 0
        first.cancel()  # the client left while chunk 1 was being made
        running.allow[1].set()  # the chunk in progress ends; no later chunk is made
        assert await asyncio.to_thread(running.closed.wait, 10)
        for _ in range(100):
            if pool.gate.admitted == 0:
                break
            await asyncio.sleep(0.01)
        assert pool.gate.admitted == 0
        assert running.made == 2, "the worker went on after the cancel"
        assert not queued.closed.is_set(), "the cancelled queued request was started"
        pool.shutdown()

    asyncio.run(scenario())
