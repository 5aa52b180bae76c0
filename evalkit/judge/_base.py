"""What every backend shares: the reply of one call, the backend protocol, retry timing.

A backend turns a :class:`~evalkit.judge._prompt.JudgeRequest` into a :class:`Reply`
for *one* logical call (transport retries on 408/409/429/5xx/529 and timeouts happen
inside it and are counted in ``attempts``). Parsing and the bounded re-ask on an
unparseable answer happen in :mod:`evalkit.judge._run`, the same for every backend.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evalkit.judge._prompt import JudgeParams, JudgeRequest

ReplyKind = Literal["answer", "refusal", "error"]

#: Status codes worth another attempt: timeout, lock, rate limit, server errors, overload.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass
class Usage:
    """Tokens and cost accumulated over the attempts of one request."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_creation_tokens += other.cache_creation_tokens
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd


@dataclass
class Reply:
    """The outcome of one logical call.

    ``kind``: ``answer`` (``payload`` holds the structured answer, or None with
    ``problem`` saying why there is none), ``refusal``, or ``error`` (``error`` says
    what failed after the transport retries). ``raw`` is the response body as text,
    with any secret scrubbed.
    """

    kind: ReplyKind
    payload: object = None
    problem: str | None = None
    raw: str | None = None
    error: str | None = None
    attempts: int = 1
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    response_model: str | None = None


@dataclass(frozen=True)
class CostEstimate:
    """Estimated spend of the calls still to send, and how it was estimated."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    method: str


class Backend(Protocol):
    """A judge that answers requests (see the module docstring)."""

    kind: str
    model: str
    spec: str
    params: JudgeParams
    networked: bool
    batch_mode: bool

    async def call(self, request: JudgeRequest) -> Reply: ...

    async def estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate: ...

    async def aclose(self) -> None: ...


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def retry_delay(
    attempt: int,
    retry_after: float | None,
    *,
    base: float = 0.5,
    cap: float = 8.0,
    max_wait: float = 120.0,
) -> float:
    """Delay before attempt ``attempt + 1`` (``attempt`` counts from 1).

    A server's retry-after is honoured as a minimum (up to ``max_wait``), plus a
    jitter of up to a quarter of it, so that callers told to wait the same time do not
    all retry in the same instant and collide again; otherwise exponential backoff
    ``base * 2**(attempt-1)`` capped at ``cap``, with jitter in [0.75, 1].
    """
    if retry_after is not None:
        return min(retry_after * random.uniform(1.0, 1.25), max_wait)
    return min(base * 2.0 ** (attempt - 1), cap) * random.uniform(0.75, 1.0)


def scrub(text: str, secrets: Sequence[str | None]) -> str:
    """``text`` with every secret (of 8 characters or more) replaced by ``[redacted]``."""
    for s in secrets:
        if s and len(s) >= 8:
            text = text.replace(s, "[redacted]")
    return text


def char_estimate(requests: Sequence[JudgeRequest], per_dim_output: int = 200) -> tuple[int, int]:
    """(input, output) token estimate: characters / 4, and ``per_dim_output`` per dimension."""
    inp = sum((len(r.system) + len(r.user)) // 4 for r in requests)
    out = sum(per_dim_output * len(r.dimensions) for r in requests)
    return inp, out


def dumps_body(value: Any) -> str:
    """A compact, deterministic JSON text of a response body."""
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
