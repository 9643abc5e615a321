"""Running the app under uvicorn with a graceful stop.

On SIGTERM or Ctrl-C uvicorn stops accepting connections and waits for the requests in flight; the
app's admission gate is closed in the same instant (``/healthz`` and new requests on open
connections answer 503), and once the last request has finished the process exits 0.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable
from types import FrameType

import uvicorn
from fastapi import FastAPI

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _GracefulServer(uvicorn.Server):
    """uvicorn's server, calling ``on_stop`` when a stop signal arrives (before the requests in flight
    have finished, so that nothing new is admitted meanwhile)."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_stop = on_stop

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._on_stop()
        super().handle_exit(sig, frame)


def serve(app: FastAPI, host: str, port: int, *, log_level: str = "info") -> None:
    """Serve ``app`` (from :func:`tts_pipeline.serving.app.create_app`) until a stop signal, then
    return once its requests in flight are done."""
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
    server = _GracefulServer(config, on_stop=app.state.pool.gate.close)
    # uvicorn re-raises the stop signal after its graceful shutdown, to the handler it found installed;
    # with the default handler SIGTERM would then kill the process (exit -15) after a clean stop, so a
    # handler that only records the signal is installed for the duration.
    received: list[int] = []
    previous = {sig: signal.signal(sig, lambda sig, frame: received.append(sig)) for sig in STOP_SIGNALS}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        log.info("stopped on %s after the requests in flight finished", signal.Signals(received[0]).name)
