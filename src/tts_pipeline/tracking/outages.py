"""A tracking server that is away: how to tell its errors from a refused call, how to ask whether it is
back, and how long a call that can wait may try before it waits.

A call that reaches the server and is refused (a bad request, a run that does not exist: HTTP 4xx)
is the caller's mistake and raises as it always did. An outage is a call that never got an answer
from the server: no connection, a timeout, a dropped connection, or answers that only say "not now"
(408, 429 and the 5xx answers, which MLflow's client retries until it gives up; an error that merely
carries MLflow's code for 500, INTERNAL_ERROR, does not count: every MlflowException has it unless
told otherwise).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

# MLflow's client retries a failed request 7 times with a doubling backoff: about 4 minutes, during
# which training stands still. A call that the outbox can replay needs no such patience: it tries
# briefly (about 3 seconds for a refused connection) and then waits in the outbox.
RETRIES = 2
BACKOFF_FACTOR = 1
# Small requests (metrics, params, tags, run status) get an answer in well under a second; a host that
# drops packets instead of refusing them would otherwise hold each try for MLflow's 120 seconds.
# Uploads keep MLflow's timeout: a server may take a while to store a large model before it answers.
SMALL_REQUEST_TIMEOUT_S = 30
# Is-it-back questions: one request, no retries, a short timeout.
PROBE_TIMEOUT_S = 5

# MLflow reads these at every request, so that they can be set for a while (MLflow's documented knobs).
ENV_MAX_RETRIES = "MLFLOW_HTTP_REQUEST_MAX_RETRIES"
ENV_BACKOFF_FACTOR = "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR"
ENV_TIMEOUT = "MLFLOW_HTTP_REQUEST_TIMEOUT"

# Error codes of MLflow errors that mean "the server (or a proxy before it) cannot answer now".
_BUSY_ERROR_CODES = frozenset(
    {"TEMPORARILY_UNAVAILABLE", "DEADLINE_EXCEEDED", "REQUEST_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED"}
)
_BUSY_HTTP_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def is_unreachable(error: BaseException) -> bool:
    """True if ``error`` (or an error it was raised from) says the tracking server did not answer.

    MLflow's client wraps a failed request into an ``MlflowException`` (keeping the requests error as
    its cause or context), so the whole chain is looked at. A connection that was refused, reset or
    timed out, retries that ran out, and "not now" answers count; an answer that refuses the call
    (4xx) does not, nor does anything else (a full disk, a bug).
    """
    import requests
    import urllib3

    network_errors = (
        ConnectionError,  # refused, reset, aborted, broken pipe (not TimeoutError: a store lock's timeout is no outage)
        requests.exceptions.ConnectionError,  # also ConnectTimeout
        requests.exceptions.Timeout,
        requests.exceptions.RetryError,  # MLflow's retries on 429 / 5xx answers ran out
        requests.exceptions.ChunkedEncodingError,  # the connection dropped in the middle of an answer
        urllib3.exceptions.MaxRetryError,
        urllib3.exceptions.ProtocolError,
        urllib3.exceptions.TimeoutError,
    )
    for link in error_chain(error):
        if isinstance(link, network_errors):
            return True
        if isinstance(link, requests.exceptions.HTTPError):  # an artifact upload's answer
            response = link.response
            if response is not None and response.status_code in _BUSY_HTTP_STATUSES:
                return True
        if getattr(link, "error_code", None) in _BUSY_ERROR_CODES and _is_mlflow_error(link):
            return True
    return False


def error_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the errors it was raised from or while handling (not those it hid with ``from None``)."""
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ if link.__cause__ is not None or link.__suppress_context__ else link.__context__


def describe(error: BaseException) -> str:
    """The root of an error chain in a few words (``[Errno 111] Connection refused``), for messages."""
    *_, root = error_chain(error)
    text = str(root) or type(root).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def server_answers(uri: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether the tracking server at ``uri`` answers now: one request to its ``/health`` page, no
    retries. Any answer but a 5xx counts (a server behind a login still answers). A store that is not
    a server (a SQLite file) has no such page: it counts as answering, and the next call finds out."""
    if not uri.startswith(("http://", "https://")):
        return True
    from mlflow.utils.credentials import get_default_host_creds
    from mlflow.utils.rest_utils import http_request

    try:
        # the same credentials and TLS settings as the client's own requests
        response = http_request(
            get_default_host_creds(uri), "/health", "GET", max_retries=0, timeout=timeout_s, raise_on_status=False
        )
    except Exception:
        return False
    return response.status_code < 500


@contextlib.contextmanager
def brief_tries(*, small_request: bool) -> Iterator[None]:
    """MLflow's retry budget for a call that can wait in the outbox: a few seconds, not minutes.

    A variable the user set wins (they may want the long budget, e.g. behind a rate limit). MLflow's
    own warnings about each retry are held back meanwhile: the outbox says once that the server is
    away, instead of a line per retry and call. The variables are the process's: a thread that calls
    MLflow meanwhile gets the same budget (a job's tracking calls all come from its main thread).
    """
    wanted = {ENV_MAX_RETRIES: str(RETRIES), ENV_BACKOFF_FACTOR: str(BACKOFF_FACTOR)}
    if small_request:
        wanted[ENV_TIMEOUT] = str(SMALL_REQUEST_TIMEOUT_S)
    added = [name for name in wanted if name not in os.environ]
    for name in added:
        os.environ[name] = wanted[name]
    retry_lines = logging.getLogger("urllib3.connectionpool")
    retry_lines.addFilter(_hide_retry_lines)
    try:
        yield
    finally:
        retry_lines.removeFilter(_hide_retry_lines)
        for name in added:
            os.environ.pop(name, None)


def _hide_retry_lines(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Retrying")


def _is_mlflow_error(error: BaseException) -> bool:
    from mlflow.exceptions import MlflowException

    return isinstance(error, MlflowException)
