"""The HTTP client the ``anthropic`` backend gives the SDK: response bodies read within
the bounds of :mod:`evalkit.judge._bounds` before the SDK parses them."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from evalkit.judge._bounds import ACCEPT_ENCODING, read_response

#: Headers that describe the body as sent; the body handed on is the inflated one.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class BoundedAsyncClient(anthropic.DefaultAsyncHttpxClient):
    """The SDK's default ``httpx2`` client, reading every non-streamed response body
    through :func:`~evalkit.judge._bounds.read_response`; it asks only for the encodings
    that can inflate. A :class:`~evalkit.judge._bounds.BodyRefused` reaches the SDK as a
    connection error whose ``__cause__`` it is. Streamed responses (batch results) are
    returned as they are, for their reader to bound."""

    def __init__(self, **kwargs: Any) -> None:
        headers = dict(kwargs.pop("headers", None) or {})
        headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)
        # httpx reads a redirect's body whole before following it: not followed here (a
        # 3xx is an HTTP error of the call, as with the openai backend's client).
        kwargs["follow_redirects"] = False
        super().__init__(headers=headers, **kwargs)

    async def send(
        self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any
    ) -> httpx2.Response:
        response = await super().send(request, stream=True, **kwargs)
        if stream:
            return response
        try:
            body = await read_response(response)
        finally:
            await response.aclose()
        headers = [
            (k, v) for k, v in response.headers.multi_items() if k.lower() not in _WIRE_HEADERS
        ]
        bounded = httpx2.Response(
            response.status_code,
            headers=headers,
            content=body,
            request=request,
            extensions=response.extensions,
            history=response.history,
        )
        bounded.elapsed = response.elapsed
        return bounded
