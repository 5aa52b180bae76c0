"""What a judge backend is willing to read from its server: bounded bodies and JSON.

A judge server is input like any file a user edits: a hostile or broken one can send a
body that never ends, a gzip bomb, JSON nested 100,000 deep, or a valid answer padded
with megabytes of whitespace. The backends read every response through these bounds,
so such a response is recorded as a row (``error`` or ``unparseable``) and the judge's
memory stays a few megabytes above its baseline, whatever the server sends.

* :func:`read_body` (:func:`read_response` for an ``httpx`` response) reads a
  response's raw bytes (as they came off the wire) and inflates them itself,
  stopping at :data:`MAX_WIRE_BYTES` received or :data:`MAX_BODY_BYTES` inflated,
  whichever comes first, with :class:`BodyRefused`. Only ``gzip`` and ``deflate``
  are inflated (what :data:`ACCEPT_ENCODING` asks for); any other content-encoding is
  refused.
* :func:`too_deep` and :func:`depth_problem` say whether a decoded value or a JSON
  text is nested deeper than :data:`MAX_JSON_DEPTH` (the answer parser,
  :func:`evalkit.judge._answer.loads_strict`, applies the same limit).

The ``openai`` backend reads its responses with :func:`read_body` itself; the
``anthropic`` backend hands the SDK a client that does
(:class:`evalkit.judge._anthropic_http.BoundedAsyncClient`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator
from typing import Any

#: Largest response body read off the wire (bytes, before any content-encoding is
#: undone). A judge's answer is a few KB; a Message at the largest ``max_tokens`` a
#: model offers (128k output tokens, about 512 KB of text, up to twice that once
#: JSON-escaped) is about 1 MiB. Four times that leaves room for any real answer and
#: stops a server that keeps sending.
MAX_WIRE_BYTES = 4 * 1024**2

#: Largest response body once inflated (bytes). The same reasoning as
#: :data:`MAX_WIRE_BYTES`: an answer that is legitimately this large does not exist,
#: and stopping here keeps a gzip bomb (2 MB that inflate to 2 GiB) from reaching memory.
MAX_BODY_BYTES = 4 * 1024**2

#: Deepest nesting of arrays and objects accepted in a response body or in the answer
#: inside it. A Message carrying a ``record_scores`` call is 7 deep (body, content,
#: block, input, scores, entry, evidence_turns); 64 is far beyond any real answer and
#: far below where Python's JSON decoder and serializers run out of stack.
MAX_JSON_DEPTH = 64

#: Longest ``model`` a response may name: model ids are tens of characters; a longer
#: (or non-string) ``model`` makes the answer unparseable rather than a ledger value.
MAX_MODEL_CHARS = 200

#: The ``Accept-Encoding`` the backends send: only what :func:`read_body` can inflate.
ACCEPT_ENCODING = "gzip, deflate"


class BodyRefused(Exception):
    """A response body that was not read (too large on the wire or inflated, or an
    encoding that cannot be undone); the message says which and holds no body text."""


def _inflater(encoding: str) -> Any:
    """A zlib decompressor for ``encoding`` (None: identity); BodyRefused otherwise."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib (or gzip) framing
    raise BodyRefused(f"response content-encoding {encoding!r} is not one evalkit reads")


async def read_body(
    chunks: AsyncIterator[bytes],
    content_encoding: str | None,
    *,
    max_wire: int = MAX_WIRE_BYTES,
    max_body: int = MAX_BODY_BYTES,
) -> bytes:
    """The body whose raw bytes ``chunks`` yields, inflated per ``content_encoding``.

    Raises :class:`BodyRefused` once more than ``max_wire`` bytes have been received or
    the inflated body passes ``max_body`` bytes (no more than ``max_body + 1`` inflated
    bytes are ever held), for an unknown encoding, and for a compressed stream that is
    corrupt or ends early. The caller closes the response (an unread rest is dropped
    with its connection).
    """
    inflate = _inflater(content_encoding or "")
    received = 0
    out = bytearray()
    try:
        async for chunk in chunks:
            received += len(chunk)
            if received > max_wire:
                raise BodyRefused(f"response body larger than {max_wire} bytes; not read")
            if inflate is None:
                out += chunk
            else:
                data = chunk
                while data and len(out) <= max_body:
                    out += inflate.decompress(data, max_body + 1 - len(out))
                    data = inflate.unconsumed_tail
            if len(out) > max_body:
                raise BodyRefused(
                    f"response body inflates to more than {max_body} bytes "
                    f"({received} bytes received); not read"
                )
        if inflate is not None and not inflate.eof:
            raise BodyRefused(f"response body ends inside its {content_encoding} stream")
    except zlib.error as exc:
        raise BodyRefused(f"response body cannot be inflated ({content_encoding}): {exc}") from None
    return bytes(out)


async def read_response(response: Any) -> bytes:
    """:func:`read_body` of an ``httpx``/``httpx2`` response sent with ``stream=True``.

    A response whose body is in memory already (an in-process transport gives one) is
    only held to :data:`MAX_BODY_BYTES`. The caller closes the response.
    """
    if response.is_stream_consumed:
        data: bytes = response.content
        if len(data) > MAX_BODY_BYTES:
            raise BodyRefused(f"response body larger than {MAX_BODY_BYTES} bytes; not read")
        return data
    return await read_body(response.aiter_raw(), response.headers.get("content-encoding"))


def too_deep(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` (decoded JSON) nests arrays/objects more than ``limit`` deep.

    Iterative, so it cannot itself run out of stack; a scalar is depth 0, ``[]`` is 1.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def depth_problem(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Why the JSON text ``text`` is nested too deep, or None.

    Too deep: the decoder gives up on its depth (Python's recursion limit, about
    1,000), or it decodes to a value nested more than ``limit`` deep. A text that is
    not JSON for any other reason has no problem here: its reader reports that.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        return f"JSON nested deeper than {limit} levels"
    except ValueError:
        return None
    return f"JSON nested deeper than {limit} levels" if too_deep(value, limit) else None
