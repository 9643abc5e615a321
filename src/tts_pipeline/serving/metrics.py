"""The speech server's Prometheus metrics, in a registry of its own (``GET /metrics``).

A registry per app, not prometheus_client's global one: two apps in one process (tests) never share
counts, and ``/metrics`` shows the server's figures alone, not the process collectors'.

- ``tts_requests_total{status, format}``: speech requests answered, by HTTP status and audio format
  (``format="none"`` when the request was refused before its format was read);
- ``tts_errors_total{kind}``: failed requests by kind (``invalid_request``, ``too_large``, ``busy``,
  ``shutting_down``, ``synthesis``, ``client_disconnected``);
- ``tts_request_seconds{format}``: arrival to last byte sent;
- ``tts_time_to_first_audio_seconds{format}``: arrival to the first audio being ready (waiting in the
  queue included), what a listener waits before hearing anything;
- ``tts_queue_depth``: admitted requests waiting for a synthesis worker; ``tts_in_flight``: admitted
  requests not yet done synthesising;
- ``tts_audio_seconds_total``: seconds of audio sent.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

# seconds; from a short phrase's first chunk on a GPU to a long text on a busy CPU
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

CONTENT_TYPE = CONTENT_TYPE_LATEST


class ServerMetrics:
    """The metrics of one app.

    Args:
        queue_depth: Called at each scrape: requests waiting for a worker.
        in_flight: Called at each scrape: admitted requests not yet done.
    """

    def __init__(self, queue_depth: Callable[[], float], in_flight: Callable[[], float]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "tts_requests", "Speech requests answered", ["status", "format"], registry=self.registry
        )
        self.errors = Counter("tts_errors", "Speech requests that failed, by kind", ["kind"], registry=self.registry)
        self.latency = Histogram(
            "tts_request_seconds",
            "Seconds from a speech request's arrival to its last byte",
            ["format"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.first_audio = Histogram(
            "tts_time_to_first_audio_seconds",
            "Seconds from a speech request's arrival to its first audio (queueing included)",
            ["format"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.audio_seconds = Counter("tts_audio_seconds", "Seconds of audio sent", registry=self.registry)
        # read at scrape time, so they can never drift from the admission gate's own counts
        depth = Gauge("tts_queue_depth", "Speech requests waiting for a worker", registry=self.registry)
        depth.set_function(queue_depth)
        flying = Gauge("tts_in_flight", "Speech requests admitted and not done synthesising", registry=self.registry)
        flying.set_function(in_flight)

    def answered(self, status: int, fmt: str | None) -> None:
        """Count one answered request."""
        self.requests.labels(status=str(status), format=fmt or "none").inc()

    def failed(self, kind: str) -> None:
        """Count one failure of kind ``kind``."""
        self.errors.labels(kind=kind).inc()

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)
