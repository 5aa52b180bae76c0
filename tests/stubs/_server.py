"""The machinery shared by the API stubs: a real HTTP server on 127.0.0.1 in a thread.

A stub records every request, injects scripted faults in order, simulates latency and
a provider's rate limits (token buckets of requests, input and output tokens, with
rate-limit headers), and counts requests in flight and 429s sent. Subclasses implement
:meth:`StubServer.route`.

For tests that count what the server received, without racing it:

* :meth:`StubServer.wait_idle` waits until no connection is open or waiting to be
  accepted, so every request a (possibly killed) client sent has been recorded;
* :meth:`StubServer.hold_after` answers the next ``n`` answer requests and holds the
  later ones until :meth:`StubServer.release`, so a client can be killed at a known
  point (``held()`` says how many are waiting);
* a ``timeout`` fault holds the request until the client hangs up (or ``hang_s``
  passes), so the client always sees a timeout, however slow the machine.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

FaultKind = Literal[
    "none",
    "status",
    "timeout",
    "malformed",
    "refusal",
    "text",
    "drop",
    "usage",
    "trickle",
    "hostile",
]

#: Listen backlog of every stub. With the stdlib's 5, the 6th simultaneous connection
#: waits for a TCP SYN retransmission (about 1 s): a client with a short timeout then
#: records an attempt the server never saw.
LISTEN_BACKLOG = 128


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour, applied to the next answer request.

    ``status``: an HTTP error (``status``, optional ``retry_after`` seconds, ``error_type``).
    ``timeout``: hold the request until the client hangs up (or the stub's ``hang_s``
    passes), then answer into the closed connection. ``malformed``: a well-formed HTTP
    answer whose content breaks the answer schema in the way ``variant`` names.
    ``refusal``: the API's refusal signal. ``text``: a text-only answer ``text``.
    ``drop``: close the connection without a reply. ``usage``: a normal answer whose
    ``usage`` block is ``usage`` (``variant="absent"``: no usage key at all).
    ``trickle``: a normal answer whose body is sent one byte every ``interval`` seconds
    (headers at once), so that no read timeout fires. ``hostile``: ``make`` turns the
    normal answer body (a dict) into the :class:`Response` sent instead (a bomb, a body
    nested 100,000 deep, an answer padded with whitespace, ...). ``none``: a normal
    answer (a placeholder in a scripted sequence).
    """

    kind: FaultKind
    status: int = 500
    retry_after: float | None = None
    error_type: str = "api_error"
    variant: str = ""
    text: str = ""
    usage: Any = None
    interval: float = 0.05
    make: Callable[[dict[str, Any]], Response] | None = None


def ok() -> Fault:
    """No fault: the next answer request is answered normally."""
    return Fault("none")


def rate_limited(retry_after: float = 0.1) -> Fault:
    return Fault("status", status=429, retry_after=retry_after, error_type="rate_limit_error")


def overloaded(retry_after: float | None = None) -> Fault:
    return Fault("status", status=529, retry_after=retry_after, error_type="overloaded_error")


def server_error() -> Fault:
    return Fault("status", status=500, error_type="api_error")


def bad_request() -> Fault:
    return Fault("status", status=400, error_type="invalid_request_error")


def timeout() -> Fault:
    return Fault("timeout")


def malformed(variant: str) -> Fault:
    return Fault("malformed", variant=variant)


def refusal() -> Fault:
    return Fault("refusal")


def text_answer(text: str) -> Fault:
    return Fault("text", text=text)


def bad_usage(usage: Any = None, *, absent: bool = False) -> Fault:
    """A normal answer whose usage block is ``usage`` (or, ``absent``, missing)."""
    return Fault("usage", usage=usage, variant="absent" if absent else "")


def trickle(interval: float = 0.05) -> Fault:
    """A normal answer sent one byte every ``interval`` seconds."""
    return Fault("trickle", interval=interval)


def hostile(make: Callable[[dict[str, Any]], Response]) -> Fault:
    """The next answer is ``make(normal answer body)``, sent as it is."""
    return Fault("hostile", make=make)


@dataclass
class Recorded:
    """One request the stub received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)


@dataclass
class Response:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    drop: bool = False
    trickle: float | None = None  # seconds between body bytes
    #: The content-type header (default: JSON, or NDJSON for a ``raw`` body).
    content_type: str | None = None
    #: A body too big to hold: its parts, sent without a content-length (the
    #: connection closes after it); sending stops when the client hangs up.
    chunks: Callable[[], Iterator[bytes]] | None = None


@dataclass
class _Bucket:
    rate: float  # units per second
    capacity: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + max(0.0, now - self.at) * self.rate)
        self.at = max(self.at, now)

    def short(self, cost: float) -> float:
        """Seconds until ``cost`` fits (0: it fits now); above the capacity: a full bucket."""
        need = min(cost, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate


class RateLimiter:
    """Token buckets like a provider's: requests, input tokens, output tokens.

    ``requests=(n, seconds)``: a bucket of ``n`` refilled at ``n / seconds`` per second.
    ``input_tpm`` / ``output_tpm``: per-minute token limits, enforced over ``burst_s``
    seconds (a bucket of ``tpm / 60 * burst_s``), as providers enforce per-minute limits
    over shorter intervals. A request is admitted when every bucket holds its cost (a
    cost above a capacity: when the bucket is full, leaving it in debt); output tokens
    are charged from ``max_tokens`` on admission and corrected to the answer's count.
    ``style``: ``anthropic`` or ``openai`` rate-limit headers (None: no headers); they
    report per-minute limits, what remains and when the bucket is full again.
    """

    def __init__(
        self,
        requests: tuple[int, float] | None = None,
        *,
        input_tpm: float | None = None,
        output_tpm: float | None = None,
        burst_s: float = 1.0,
        style: str | None = "anthropic",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.style = style
        now = clock()
        self.buckets: dict[str, _Bucket] = {}
        if requests is not None:
            n, seconds = requests
            self.buckets["requests"] = _Bucket(n / seconds, float(n), float(n), now)
        for name, tpm in (("input_tokens", input_tpm), ("output_tokens", output_tpm)):
            if tpm is not None:
                cap = tpm / 60 * burst_s
                self.buckets[name] = _Bucket(tpm / 60, cap, cap, now)
        self._lock = threading.Lock()

    def admit(self, costs: dict[str, float]) -> float | None:
        """Charge ``costs`` and return None, or return the seconds to wait (a 429)."""
        now = self.clock()
        with self._lock:
            for b in self.buckets.values():
                b.refill(now)
            wait = max((b.short(costs.get(k, 0.0)) for k, b in self.buckets.items()), default=0.0)
            if wait > 0:
                return wait
            for k, b in self.buckets.items():
                b.level -= costs.get(k, 0.0)
        return None

    def give(self, name: str, amount: float) -> None:
        with self._lock:
            b = self.buckets.get(name)
            if b is not None:
                b.refill(self.clock())
                b.level = min(b.capacity, b.level + amount)

    def headers(self, wall: float | None = None) -> dict[str, str]:
        """The rate-limit headers of the buckets' state now (``{}`` when ``style`` is None)."""
        if self.style is None:
            return {}
        now, wall = self.clock(), time.time() if wall is None else wall
        out: dict[str, str] = {}
        with self._lock:
            for name, b in self.buckets.items():
                b.refill(now)
                limit = round(b.rate * 60)
                remaining = max(0, int(b.level))
                reset = (b.capacity - b.level) / b.rate
                if self.style == "anthropic":
                    key = f"anthropic-ratelimit-{name.replace('_', '-')}"
                    when = datetime.fromtimestamp(wall + reset, UTC)
                    out[f"{key}-limit"] = str(limit)
                    out[f"{key}-remaining"] = str(remaining)
                    out[f"{key}-reset"] = when.isoformat(timespec="milliseconds")
                elif name in ("requests", "input_tokens"):
                    res = "requests" if name == "requests" else "tokens"
                    out[f"x-ratelimit-limit-{res}"] = str(limit)
                    out[f"x-ratelimit-remaining-{res}"] = str(remaining)
                    out[f"x-ratelimit-reset-{res}"] = f"{max(0, round(reset * 1000))}ms"
        return out


class _Server(ThreadingHTTPServer):
    """The HTTP server of a stub: a deep backlog, and a count of open connections."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, stub: StubServer) -> None:
        super().__init__(address, handler)
        self.stub = stub

    def get_request(self) -> tuple[Any, Any]:
        # Accept and count under one lock, so that StubServer.idle never sees a
        # connection that has left the backlog but is not counted yet.
        with self.stub._conn_lock:
            request = super().get_request()
            self.stub._connections += 1
        return request

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up is fine
            super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            with self.stub._conn_lock:
                self.stub._connections -= 1


class StubServer:
    """Base class: start/stop, recording, faults, latency, rate limit, in-flight count.

    Use as a context manager (``with Stub() as stub: stub.base_url``). ``latency`` (s)
    delays every answer request; ``rate_limit=(n, seconds)`` (a bucket of ``n``
    requests refilled at ``n / seconds`` per second), ``input_tpm`` and ``output_tpm``
    are a :class:`RateLimiter`: beyond them the stub answers 429 with ``retry-after``
    and rate-limit headers, sent on successes too unless ``ratelimit_headers=False``;
    ``hang_s`` is the longest a ``timeout`` fault holds a request (it ends sooner when
    the client hangs up); ``api_key`` if set must be presented (bearer or x-api-key) or
    the stub answers 401.
    """

    url_suffix = ""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        rate_limit: tuple[int, float] | None = None,
        input_tpm: float | None = None,
        output_tpm: float | None = None,
        ratelimit_headers: bool = True,
        hang_s: float = 10.0,
        api_key: str | None = None,
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.rate_limit = rate_limit
        self.limiter: RateLimiter | None = None
        if rate_limit is not None or input_tpm is not None or output_tpm is not None:
            self.limiter = RateLimiter(
                rate_limit,
                input_tpm=input_tpm,
                output_tpm=output_tpm,
                style=self.header_style if ratelimit_headers else None,
            )
        self.hang_s = hang_s
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.rate_limited = 0
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._conn_lock = threading.Lock()
        self._connections = 0
        self._local = threading.local()
        self._answers = 0
        self._hold_from: int | None = None
        self._held = 0
        self._gate = threading.Event()

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> StubServer:
        handler = _make_handler(self)
        self._server = _Server(("127.0.0.1", self._port), handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._gate.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "stub not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_suffix}"

    # -- waiting on the server, not on the clock -----------------------------------

    def idle(self) -> bool:
        """No connection open, none waiting in the listen backlog."""
        assert self._server is not None, "stub not started"
        with self._conn_lock:
            waiting = select.select([self._server.socket], [], [], 0)[0]
            return not waiting and self._connections == 0

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until :meth:`idle` (every request sent has been recorded); False if
        ``timeout`` seconds pass first. Clients must have closed their connections."""
        deadline = time.monotonic() + timeout
        while not self.idle():
            if time.monotonic() > deadline:
                return False
            self._stop.wait(0.01)
        return True

    def hold_after(self, n: int) -> None:
        """Answer the next ``n`` answer requests, then hold each later one until
        :meth:`release` (or :meth:`stop`)."""
        with self._lock:
            self._hold_from = self._answers + n
            self._gate.clear()

    def release(self) -> None:
        """Let every held request (and every later one) through."""
        with self._lock:
            self._hold_from = None
        self._gate.set()

    def held(self) -> int:
        """Answer requests waiting at the gate of :meth:`hold_after`."""
        with self._lock:
            return self._held

    # -- scripting -----------------------------------------------------------------

    def script(self, *faults: Fault) -> None:
        """Queue faults; each answer request takes the next one (FIFO)."""
        with self._lock:
            self._faults.extend(faults)

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def authorised(self, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        return (
            headers.get("x-api-key") == self.api_key
            or headers.get("authorization") == f"Bearer {self.api_key}"
        )

    def hang(self) -> None:
        """Hold the calling handler until its client hangs up, ``hang_s`` passes or the
        stub stops."""
        conn: socket.socket | None = getattr(self._local, "connection", None)
        deadline = time.monotonic() + self.hang_s
        while not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if conn is None:
                self._stop.wait(left)
                return
            if select.select([conn], [], [], min(left, 0.05))[0]:
                return  # the client closed the connection (or sent something): stop holding

    def answer_request(
        self,
        handler: Callable[[Fault | None], Response],
        *,
        input_tokens: float = 0.0,
        max_tokens: float = 0.0,
    ) -> Response:
        """Run an answer request: rate limit (``input_tokens`` as the limit counts them,
        ``max_tokens`` charged before and corrected after), in-flight count, gate,
        latency, next fault."""
        limiter = self.limiter
        costs = {"requests": 1.0, "input_tokens": input_tokens, "output_tokens": max_tokens}
        wait = limiter.admit(costs) if limiter is not None else None
        if wait is not None:
            resp = self.error(429, "rate_limit_error", "stub rate limit", retry_after=wait)
            assert limiter is not None
            resp.headers.update(limiter.headers())
            with self._lock:
                self.rate_limited += 1
            return resp
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._answers += 1
            hold = self._hold_from is not None and self._answers > self._hold_from
            self._held += hold
        try:
            if hold:
                self._gate.wait()
                with self._lock:
                    self._held -= 1
            if self.latency:
                self._stop.wait(self.latency)
            resp = handler(self._next_fault())
            if limiter is not None:
                used = self.output_tokens_of(resp) if resp.status == 200 else 0
                limiter.give("output_tokens", max_tokens - (used or 0))
                resp.headers.update(limiter.headers())
            return resp
        finally:
            with self._lock:
                self.in_flight -= 1

    #: Rate-limit header family of this stub (``anthropic`` or ``openai``).
    header_style = "anthropic"

    def output_tokens_of(self, resp: Response) -> int | None:
        """Output tokens an answer counts against the limit (subclasses read the body)."""
        return None

    def error(
        self, status: int, kind: str, message: str, retry_after: float | None = None
    ) -> Response:
        headers = {} if retry_after is None else {"retry-after": f"{retry_after:.3f}"}
        return Response(status, self.error_body(kind, message), headers)

    def error_body(self, kind: str, message: str) -> Any:
        return {"type": "error", "error": {"type": kind, "message": message}}

    def route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Response:
        raise NotImplementedError

    def sent(self, method: str, path: str) -> None:
        """Called once an answer has been written to the client (a hook for tests)."""


def _make_handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            data = self.rfile.read(length) if length else b""
            try:
                body = json.loads(data) if data else None
            except json.JSONDecodeError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            stub._local.connection = self.connection
            with stub._lock:
                stub.requests.append(Recorded(method, self.path, headers, body))
            if not stub.authorised(headers):
                resp = stub.error(401, "authentication_error", "invalid x-api-key")
            else:
                resp = stub.route(method, self.path.split("?")[0], headers, body)
            try:
                if resp.drop:
                    self.close_connection = True
                    return
                payload = resp.raw if resp.raw is not None else json.dumps(resp.body).encode()
                self.send_response(resp.status)
                ctype = "application/json" if resp.raw is None else "application/x-ndjson"
                self.send_header("content-type", resp.content_type or ctype)
                if resp.chunks is None:
                    self.send_header("content-length", str(len(payload)))
                for k, v in resp.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if resp.chunks is not None:
                    self.close_connection = True
                    for part in resp.chunks():
                        self.wfile.write(part)
                    return
                if resp.trickle is None:
                    self.wfile.write(payload)
                    self.wfile.flush()
                    stub.sent(method, self.path.split("?")[0])
                    return
                for i in range(len(payload)):
                    self.wfile.write(payload[i : i + 1])
                    if stub._stop.wait(resp.trickle):
                        break
                self.close_connection = True
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def do_POST(self) -> None:
            self._handle("POST")

        def do_GET(self) -> None:
            self._handle("GET")

    return Handler
