"""A cap on request bodies, answered like every other refusal (the app's JSON error, status 413).

Starlette's own limit (FastAPI's ``max_body_size``) answers a body whose ``Content-Length`` is over
the limit with plain text, replacing the app's answer; this one raises ``HTTPException(413)`` where
the app reads the body, so the app's handler words the answer, and refuses a declared length over
the limit before reading anything. A chunked body is counted as it arrives.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes raises ``HTTPException(413)`` when read.

    Args:
        app: The app inside.
        limit: The most bytes a body may have.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        over = declared.isdigit() and int(declared) > self.limit
        received = 0

        async def limited() -> Message:
            nonlocal received
            if over:  # refused before a byte is read: the client learns at once
                raise HTTPException(413, f"body of {declared} bytes is over the limit of {self.limit}")
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise HTTPException(413, f"body is over the limit of {self.limit} bytes")
            return message

        await self.app(scope, limited, send)
