"""A stub of the Anthropic Messages API on 127.0.0.1, for tests, benchmarks and notebooks.

Routes: ``POST /v1/messages``, ``POST /v1/messages/count_tokens``,
``POST /v1/messages/batches``, ``GET /v1/messages/batches`` (newest first, one page),
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

Usage::

    from tests.stubs.anthropic_stub import AnthropicStub, running_anthropic_stub, rate_limited

    with AnthropicStub(latency=0.05) as stub:          # the stub object
        stub.script(rate_limited(0.1), overloaded())   # the next two answers fail
        client = anthropic.AsyncAnthropic(base_url=stub.base_url, api_key="test")

    with running_anthropic_stub(latency=0.05) as base_url:   # just the URL
        os.environ["ANTHROPIC_BASE_URL"] = base_url

Standalone: ``python -m tests.stubs.anthropic_stub --port 8765 --latency 0.2`` (from the
repository root) prints the base URL and serves until interrupted.

Answers. By default the stub answers a ``record_scores`` request (forced tool use, or
JSON output when the request carries ``output_config.format``) with a valid entry
per requested dimension, read from the request's own schema: a bin chosen by hashing
the dimension and the request id, ``signal_present`` true, the last turn id of the
transcript as evidence. Pass ``responder=`` (body -> answer dict) to answer otherwise.
Usage: input tokens are characters / 4; the system text is "cached" after its first
use (``cache_creation_input_tokens`` once, then ``cache_read_input_tokens``).

Rate limits (``rate_limit=(n, s)``, ``input_tpm=``, ``output_tpm=``; see
:class:`tests.stubs._server.RateLimiter`): token buckets counted as Anthropic counts
them (input tokens without cache reads; output tokens from ``max_tokens``, corrected
after), 429 with ``retry-after`` beyond them, and ``anthropic-ratelimit-*`` headers on
every answer unless ``ratelimit_headers=False``.

Usage faults (``bad_usage(value)`` or ``bad_usage(absent=True)``) replace or remove
the ``usage`` block of an otherwise normal answer; ``trickle(interval)`` sends a normal
answer one byte at a time; ``hostile(make)`` sends ``make(message)`` instead of the
normal Message (see :class:`tests.stubs._server.Fault`). ``hold_after(n)``,
``held()``, ``release()`` and ``wait_idle()`` come from :class:`tests.stubs._server.StubServer`.

Malformed variants (``malformed(variant)``): ``missing_dimension``,
``extra_dimension``, ``duplicate_dimension``, ``bad_bin`` (``High``), ``extra_key``,
``wrong_type`` (``signal_present: "yes"``), ``bad_evidence`` (``t99``), ``no_tool``
(text only), ``wrong_tool``, ``not_json`` (JSON mode: text that is not JSON).

Batches: results are computed when fetched. ``hold_batches = True`` keeps every batch
``in_progress`` until :meth:`AnthropicStub.release_batches`; ``batch_errors`` holds
custom ids to report as errored. ``hold_creates("create" | "discard")`` holds every
later batch create inside the server (``create_arrived`` is set) until
:meth:`AnthropicStub.release_creates`, then makes the batch (``"create"``: a client
killed meanwhile orphans it) or drops the connection without making it
(``"discard"``: the create never took effect). ``create_answered`` is set once a
create's answer has been written to the client. ``created_at`` is the real time.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from tests.stubs._server import (
    Fault,
    Recorded,
    Response,
    StubServer,
    bad_request,
    bad_usage,
    hostile,
    malformed,
    ok,
    overloaded,
    rate_limited,
    refusal,
    server_error,
    text_answer,
    timeout,
    trickle,
)

__all__ = [
    "AnthropicStub",
    "Fault",
    "Recorded",
    "bad_request",
    "bad_usage",
    "default_answer",
    "hostile",
    "malformed",
    "ok",
    "overloaded",
    "rate_limited",
    "refusal",
    "request_id_of",
    "running_anthropic_stub",
    "server_error",
    "text_answer",
    "timeout",
    "trickle",
]

_REQUEST_ID = re.compile(r"Request ([0-9a-f]{8})\b")
_TURN_ID = re.compile(r'id="(t\d+)" role=')


def _user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    content = messages[-1].get("content", "") if messages else ""
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content)


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return str(system)


def request_id_of(body: Any) -> str | None:
    """The opaque request id a judge prompt carries (``Request abcd1234.``), if any."""
    if not isinstance(body, dict):
        return None
    m = _REQUEST_ID.search(_user_text(body))
    return m.group(1) if m else None


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The ``record_scores`` schema of a Messages or chat-completions body (None if absent)."""
    if body.get("tools"):
        schema: dict[str, Any] = body["tools"][0]["input_schema"]
        return schema
    if body.get("output_config"):
        return dict(body["output_config"]["format"]["schema"])
    if body.get("response_format"):
        return dict(body["response_format"]["json_schema"]["schema"])
    return None


def default_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A valid ``record_scores`` answer for a judge request ``body``.

    A request without an answer schema (a plain chat request) gets
    ``{"text": "stub reply to N message(s)"}``, sent as a text answer.
    """
    schema = schema_of(body)
    if schema is None:
        return {"text": f"stub reply to {len(body.get('messages') or [])} message(s)"}
    entry = schema["properties"]["scores"]["items"]["properties"]
    dims, bins = entry["dimension"]["enum"], entry["bin"]["enum"]
    turns = _TURN_ID.findall(_user_text(body))
    rid = request_id_of(body) or ""
    scores = []
    for d in dims:
        h = int(hashlib.sha256(f"{d}:{rid}".encode()).hexdigest(), 16)
        scores.append(
            {
                "dimension": d,
                "bin": bins[h % len(bins)],
                "signal_present": True,
                "evidence_turns": turns[-1:],
                "rationale": "stub rationale",
                "injection_attempt": False,
            }
        )
    return {"scores": scores}


def break_answer(answer: dict[str, Any], variant: str) -> dict[str, Any]:
    """``answer`` damaged in the way ``variant`` names (see the module docstring)."""
    scores = [dict(s) for s in answer["scores"]]
    if variant == "missing_dimension":
        scores = scores[:-1]
    elif variant == "extra_dimension":
        scores.append(dict(scores[0], dimension="made_up_dimension"))
    elif variant == "duplicate_dimension":
        scores.append(dict(scores[0]))
    elif variant == "bad_bin":
        scores[0]["bin"] = scores[0]["bin"].capitalize()
    elif variant == "extra_key":
        scores[0]["score"] = 3
    elif variant == "wrong_type":
        scores[0]["signal_present"] = "yes"
    elif variant == "bad_evidence":
        scores[0]["evidence_turns"] = ["t99"]
    else:
        raise ValueError(f"unknown malformed variant {variant!r}")
    return {"scores": scores}


class AnthropicStub(StubServer):
    """The Messages API stub (see the module docstring for options and variants)."""

    def __init__(
        self,
        *,
        responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.responder = responder or default_answer
        self.hold_batches = False
        self.batch_errors: set[str] = set()
        self.batches: dict[str, dict[str, Any]] = {}
        self.create_hold: str | None = None
        self.create_arrived = threading.Event()
        self.create_answered = threading.Event()
        self._create_gate = threading.Event()
        self._cached: set[str] = set()
        self._ids = itertools.count(1)

    # -- helpers for tests ------------------------------------------------------------

    def message_requests(self) -> list[Recorded]:
        """Recorded ``POST /v1/messages`` requests (answers asked for), in order."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def request_ids(self) -> list[str]:
        """Request ids of every answer asked for (direct calls and batch items)."""
        out = [request_id_of(r.body) for r in self.message_requests()]
        for b in self.batches.values():
            out += [request_id_of(item["params"]) for item in b["requests"]]
        return [x for x in out if x]

    def release_batches(self) -> None:
        self.hold_batches = False

    def hold_creates(self, mode: str = "create") -> None:
        """Hold later batch creates (see the module docstring); ``mode``: create|discard."""
        if mode not in ("create", "discard"):
            raise ValueError(f"unknown create hold {mode!r}")
        self._create_gate.clear()
        self.create_hold = mode

    def release_creates(self) -> None:
        self._create_gate.set()

    def sent(self, method: str, path: str) -> None:
        if method == "POST" and path == "/v1/messages/batches":
            self.create_answered.set()

    # -- routes -------------------------------------------------------------------------

    def route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Response:
        if method == "POST" and path == "/v1/messages":
            return self.answer_request(
                lambda fault: self._message(body, fault),
                input_tokens=self._limit_input(body),
                max_tokens=float(body.get("max_tokens") or 0) if isinstance(body, dict) else 0.0,
            )
        if method == "POST" and path == "/v1/messages/count_tokens":
            n = (len(_system_text(body)) + len(_user_text(body))) // 4
            return Response(200, {"input_tokens": n})
        if method == "POST" and path == "/v1/messages/batches":
            return self._create_batch(body)
        if method == "GET" and path == "/v1/messages/batches":
            with self._lock:
                ids = sorted(self.batches, key=lambda b: -self.batches[b]["created"])
            data = [self._batch_json(b) for b in ids]
            first, last = (ids[0], ids[-1]) if ids else (None, None)
            return Response(
                200, {"data": data, "has_more": False, "first_id": first, "last_id": last}
            )
        m = re.fullmatch(r"/v1/messages/batches/([A-Za-z0-9_]+)(/results)?", path)
        if method == "GET" and m and m.group(1) in self.batches:
            if m.group(2):
                return self._batch_results(m.group(1))
            return Response(200, self._batch_json(m.group(1)))
        return self.error(404, "not_found_error", f"no route {method} {path}")

    def _limit_input(self, body: Any) -> float:
        """Input tokens the limit counts, as Anthropic's ITPM: uncached input and cache
        writes, not cache reads."""
        if not isinstance(body, dict):
            return 0.0
        system = _system_text(body)
        with self._lock:
            cached = hashlib.sha256(system.encode()).hexdigest() in self._cached
        return float(len(_user_text(body)) // 4 + (0 if cached else len(system) // 4))

    def output_tokens_of(self, resp: Response) -> int | None:
        usage = resp.body.get("usage") if isinstance(resp.body, dict) else None
        value = usage.get("output_tokens") if isinstance(usage, dict) else None
        return value if isinstance(value, int) else None

    def _usage(self, body: dict[str, Any], n_dims: int) -> dict[str, int]:
        system = _system_text(body)
        key = hashlib.sha256(system.encode()).hexdigest()
        with self._lock:
            seen = key in self._cached
            self._cached.add(key)
        return {
            "input_tokens": len(_user_text(body)) // 4,
            "output_tokens": 40 * max(1, n_dims),
            "cache_creation_input_tokens": 0 if seen else len(system) // 4,
            "cache_read_input_tokens": len(system) // 4 if seen else 0,
        }

    def message_json(self, body: dict[str, Any], fault: Fault | None = None) -> dict[str, Any]:
        """The Message a request gets, with ``fault`` (malformed/refusal/text) applied."""
        answer = self.responder(body)
        json_mode = not body.get("tools")
        stop = "end_turn" if json_mode else "tool_use"
        content: list[dict[str, Any]]
        content_faults = ("no_tool", "wrong_tool", "not_json")
        if fault is not None and fault.kind == "malformed" and fault.variant not in content_faults:
            answer = break_answer(answer, fault.variant)
        if json_mode and schema_of(body) is None:
            content = [{"type": "text", "text": str(answer.get("text", json.dumps(answer)))}]
        elif json_mode:
            text = json.dumps(answer)
            if fault is not None and fault.variant == "not_json":
                text = text.replace('"scores"', "scores", 1)
            content = [{"type": "text", "text": text}]
        else:
            name = "other_tool" if fault is not None and fault.variant == "wrong_tool" else None
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{next(self._ids):06d}",
                    "name": name or body["tools"][0]["name"],
                    "input": answer,
                }
            ]
        if fault is not None and fault.variant == "no_tool":
            content, stop = [{"type": "text", "text": "Scores: low, high."}], "end_turn"
        if fault is not None and fault.kind == "text":
            content, stop = [{"type": "text", "text": fault.text}], "end_turn"
        if fault is not None and fault.kind == "refusal":
            content, stop = [], "refusal"
        n_dims = len(answer.get("scores", [])) if isinstance(answer, dict) else 1
        message = {
            "id": f"msg_{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "stub"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self._usage(body, n_dims),
        }
        if fault is not None and fault.kind == "usage":
            message.pop("usage")
            if fault.variant != "absent":
                message["usage"] = fault.usage
        return message

    def _message(self, body: Any, fault: Fault | None) -> Response:
        if fault is not None and fault.kind == "status":
            return self.error(fault.status, fault.error_type, "stub fault", fault.retry_after)
        if fault is not None and fault.kind == "timeout":
            self.hang()
        if fault is not None and fault.kind == "drop":
            return Response(0, drop=True)
        slow = fault.interval if fault is not None and fault.kind == "trickle" else None
        if fault is not None and fault.make is not None:
            return fault.make(self.message_json(body))
        return Response(200, self.message_json(body, fault), trickle=slow)

    # -- batches --------------------------------------------------------------------------

    def _create_batch(self, body: Any) -> Response:
        hold = self.create_hold
        if hold is not None:
            self.create_arrived.set()
            self._create_gate.wait()
            if hold == "discard" or self._stop.is_set():
                return Response(0, drop=True)
        batch_id = f"msgbatch_stub{next(self._ids):06d}"
        with self._lock:
            self.batches[batch_id] = {
                "requests": list(body["requests"]),
                "polls": 0,
                "created": time.time(),
            }
        return Response(200, self._batch_json(batch_id))

    def _batch_json(self, batch_id: str) -> dict[str, Any]:
        b = self.batches[batch_id]
        b["polls"] += 1
        n = len(b["requests"])
        ended = not self.hold_batches
        errored = sum(r["custom_id"] in self.batch_errors for r in b["requests"])
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n - errored if ended else 0,
                "errored": errored if ended else 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": _iso(b["created"]),
            "expires_at": _iso(b["created"] + 86400),
            "ended_at": "2026-11-30T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{batch_id}/results"
            if ended
            else None,
        }

    def _batch_results(self, batch_id: str) -> Response:
        lines = []
        for item in self.batches[batch_id]["requests"]:
            cid = item["custom_id"]
            if cid in self.batch_errors:
                result: dict[str, Any] = {
                    "type": "errored",
                    "error": self.error_body("api_error", "stub batch item error"),
                }
            else:
                result = {"type": "succeeded", "message": self.message_json(item["params"])}
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        return Response(200, raw=("\n".join(lines) + "\n").encode())


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@contextmanager
def running_anthropic_stub(**options: Any) -> Iterator[str]:
    """Run an :class:`AnthropicStub` with ``options``; yield its base URL."""
    with AnthropicStub(**options) as stub:
        yield stub.base_url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Anthropic Messages API stub on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--rate-limit", default=None, metavar="N/SECONDS")
    parser.add_argument("--input-tpm", type=float, default=None)
    parser.add_argument("--output-tpm", type=float, default=None)
    args = parser.parse_args(argv)
    limit = None
    if args.rate_limit:
        n, s = args.rate_limit.split("/")
        limit = (int(n), float(s))
    stub = AnthropicStub(
        latency=args.latency,
        rate_limit=limit,
        input_tpm=args.input_tpm,
        output_tpm=args.output_tpm,
        port=args.port,
    ).start()
    print(stub.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
