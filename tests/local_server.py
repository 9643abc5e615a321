"""A local HTTP server in a thread, for download tests (never the internet)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from http.server import HTTPServer


@contextlib.contextmanager
def serving(httpd: HTTPServer) -> Iterator[tuple[str, Callable[[], None]]]:
    """Serve ``httpd`` in a background thread; yield its base URL and a ``stop`` that may be called early."""
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    stopped = False

    def stop() -> None:
        nonlocal stopped
        if not stopped:
            httpd.shutdown()
            httpd.server_close()
            stopped = True

    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", stop
    finally:
        stop()
