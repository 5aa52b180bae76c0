"""What every backend shares: the reply of one call, the backend protocol, retry timing.

A backend turns a :class:`~evalkit.judge._prompt.JudgeRequest` into a :class:`Reply`
for *one* logical call (transport retries on 408/409/429/5xx/529 and timeouts happen
inside it and are counted in ``attempts``). Parsing and the bounded re-ask on an
unparseable answer happen in :mod:`evalkit.judging._run`, the same for every backend.

Also shared: the local token estimate (:data:`CHARS_PER_TOKEN`), the strict reading of
token counts in a usage block (:func:`token_count`), the per-attempt wall-clock
deadline (:data:`CALL_DEADLINE_S`) and the dead-server rule (:class:`Reachability`).
"""

from __future__ import annotations

import email.utils
import random
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evalkit.errors import JudgeError
from evalkit.judge._prompt import JudgeParams, JudgeRequest
from evalkit.secrets import scrub as scrub_secrets

ReplyKind = Literal["answer", "refusal", "error"]

#: Status codes worth another attempt: timeout, lock, rate limit, server errors, overload.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

#: Characters per token of the local estimate made before anything is sent. A rule of
#: thumb for English under BPE tokenizers; Claude's own count can differ by some tens of
#: per cent (German, Spanish and JSON run denser), which is why the plan calls it
#: approximate.
CHARS_PER_TOKEN = 4

#: Consecutive connection failures (refused, DNS, connect timeout) that stop a run.
UNREACHABLE_AFTER = 5

#: Default wall-clock bound on one HTTP attempt, however the bytes trickle in.
CALL_DEADLINE_S = 120.0

#: Connect timeout (seconds) of the backends, so a black-holed host fails fast.
CONNECT_TIMEOUT_S = 10.0

#: Largest token count one usage field may hold. No call reads or writes a billion
#: tokens (context windows are a few million at most); a larger count is a broken or
#: hostile server, and beyond 2**63 it would not even fit the ledger's INTEGER column.
MAX_TOKEN_COUNT = 10**9


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
    """Estimated spend of the calls still to send, and how it was estimated.

    ``local``: computed on this machine, nothing sent (an approximation); False when a
    provider's counting endpoint saw (a sample of) the requests.
    """

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    method: str
    local: bool = True


@dataclass(frozen=True)
class BatchInfo:
    """A batch as the provider lists it: id, creation time (epoch s), request count,
    processing status (``in_progress``, ``canceling``, ``ended``)."""

    batch_id: str
    created_at: float
    count: int
    status: str


class Backend(Protocol):
    """A judge that answers requests (see the module docstring).

    ``estimate`` never touches the network: it runs before the user has agreed to send
    anything. A backend with a token-counting endpoint may also offer
    ``exact_estimate(requests) -> CostEstimate``, which sends (a sample of) the requests
    to it and is called only once sending is consented to. ``call`` never raises for an
    API error (it returns an ``error`` reply) except :class:`ServerUnreachable`.
    """

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
    """``text`` scrubbed by :func:`evalkit.secrets.scrub` (configured and key-shaped
    secrets), and every secret passed here (a key given as an argument) as well."""
    return scrub_secrets(text, extra=secrets)


def char_estimate(requests: Sequence[JudgeRequest], per_dim_output: int = 200) -> tuple[int, int]:
    """(input, output) token estimate: characters / :data:`CHARS_PER_TOKEN` of the system
    and user text, and ``per_dim_output`` per dimension. Local: nothing is sent."""
    inp = sum((len(r.system) + len(r.user)) // CHARS_PER_TOKEN for r in requests)
    out = sum(per_dim_output * len(r.dimensions) for r in requests)
    return inp, out


# -- usage blocks ---------------------------------------------------------------------


class UsageError(ValueError):
    """A usage block that cannot be trusted; the message names the field."""


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


#: Marks a key absent from a usage block (as opposed to present and null).
MISSING: Any = _Missing()


def token_count(value: object, name: str, *, required: bool = True) -> int:
    """``value`` as a token count, or :class:`UsageError` naming ``name``.

    A count is a non-negative ``int`` up to :data:`MAX_TOKEN_COUNT`; ``bool`` is not an
    int here, nor is ``3.0`` or ``"3"``. An absent (:data:`MISSING`) or null value is 0
    when not ``required``.
    """
    if value is MISSING or value is None:
        if not required:
            return 0
        raise UsageError(f"{name} is {'missing' if value is MISSING else 'null'}")
    if isinstance(value, bool) or not isinstance(value, int):
        shown = repr(value)[:40]
        raise UsageError(f"{name} is {shown} ({type(value).__name__}), not a whole number")
    if value < 0:
        raise UsageError(f"{name} is {value}, a negative token count")
    if value > MAX_TOKEN_COUNT:
        raise UsageError(f"{name} is more than {MAX_TOKEN_COUNT}, not a plausible token count")
    return value


def kind_of(value: object) -> str:
    """A short description of a JSON value's type, for problem texts."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


# -- the dead-server rule -------------------------------------------------------------


def display_url(url: str) -> str:
    """``url`` without userinfo, query or fragment (where credentials hide)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class ServerUnreachable(JudgeError):
    """The judge server refused or failed :data:`UNREACHABLE_AFTER` connections in a row.

    Raised out of a backend's ``call``; the sender stops the run on it. ``answered`` is
    set by the sender when the call had already been answered once (an unparseable
    answer whose re-ask could not connect), so that answer is still recorded.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.answered: dict[str, Any] | None = None


class Reachability:
    """Consecutive connection failures of one backend, across its concurrent calls.

    :meth:`failed` counts a failure to connect (refused, DNS, connect timeout: the
    request never left); anything the server answered, even a 5xx or a 429, or an
    attempt that connected and then timed out, resets the count (:meth:`reached`). At
    ``after`` failures in a row the backend is tripped: :meth:`check` raises
    :class:`ServerUnreachable` before any further attempt, so a run against a dead
    server ends after a handful of attempts instead of retrying every call.
    :meth:`reset` (at the end of a run) clears it.
    """

    def __init__(self, url: str, after: int = UNREACHABLE_AFTER) -> None:
        self.url = display_url(url)
        self.after = after
        self.failures = 0
        self.last = ""

    @property
    def tripped(self) -> bool:
        return self.failures >= self.after

    def check(self) -> None:
        """Raise :class:`ServerUnreachable` if the server is taken for dead."""
        if self.tripped:
            raise ServerUnreachable(
                f"judge server {self.url} is unreachable: {self.failures} connection "
                f"failures in a row (last: {self.last}); stopped sending. Answers already "
                "received are in the ledger; calls not sent are not recorded, so re-running "
                "the same command once the server is up sends exactly those"
            )

    def failed(self, detail: str) -> None:
        """Count one failed connection (``detail`` is scrubbed by the caller); maybe trip."""
        self.failures += 1
        self.last = detail
        self.check()

    def reached(self) -> None:
        if not self.tripped:
            self.failures = 0

    def reset(self) -> None:
        self.failures = 0
        self.last = ""


def dumps_body(value: Any) -> str:
    """A compact, deterministic JSON text of a response body."""
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
