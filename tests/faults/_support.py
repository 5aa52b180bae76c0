"""Shared by the fault suite and the benchmarks: synthetic catalogues and counting stubs.

* :func:`synthetic_catalogue` writes ``n`` distinct one-exchange cases (and a label for
  every gated dimension they are scored on) next to the shipped frozen files, with the
  builders of :mod:`tests.factory`, so every case gives a distinct judge request.
* :class:`CountingStub` is the Anthropic stub of :mod:`tests.stubs.anthropic_stub` that
  also logs, for every ``POST /v1/messages``, the request id shown to the judge, a hash
  of the body, the HTTP status it answered and the fault it applied; so duplicates and
  retries are counted on the server side, not trusted from the client. Read its counts
  after ``wait_idle()``: every request a client sent has then been logged.
* :class:`HostileStub` answers every judge request with content blocks built by a
  function of the request body (malformed or hostile answers through the real SDK).

Import with the repository root on ``sys.path`` (pytest's ``pythonpath`` does it; the
benchmarks insert it themselves).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.factory import copy_frozen, make_case, write_cases, write_labels
from tests.stubs.anthropic_stub import AnthropicStub, Fault, Response, request_id_of

FAKE_KEY = "sk-ant-faults-FAKE-NOT-A-KEY-4b1d9e"
MODEL = "claude-sonnet-4-6"
TOPICS = (
    "a headache", "a sore throat", "back pain", "a sprained ankle", "hay fever",
    "heartburn", "a mild sunburn", "a blocked nose", "trouble sleeping", "a bee sting",
)  # fmt: skip


def synthetic_catalogue(
    root: Path, n: int, *, prefix: str = "s", with_sources: bool = False
) -> Path:
    """A catalogue at ``root`` with ``n`` distinct calibration cases in en-US.

    Case ``i`` asks about a topic with its number in the text, so every case renders a
    different prompt (hence a different request key). With ``with_sources`` each case
    carries a leaflet, so ``faithfulness`` is scored too.
    """
    root = copy_frozen(root)
    cases, labels = [], []
    for i in range(n):
        cid = f"{prefix}{i:06d}"
        topic = TOPICS[i % len(TOPICS)]
        sources = None
        if with_sources:
            sources = [
                {"id": f"leaf-{i}", "kind": "leaflet", "title": f"About {topic}",
                 "text": f"Rest and fluids help with {topic}. Ask a pharmacist (note {i})."}
            ]  # fmt: skip
        cases.append(
            make_case(
                cid,
                user=(f"What helps with {topic}? (question {i})",),
                replies=(f"Rest and fluids usually help with {topic}. (answer {i})",),
                sources=sources,
            )
        )
        dims = (
            ("self_harm", "escalation", "faithfulness")
            if with_sources
            else ("self_harm", "escalation")
        )
        labels += [(cid, d, "low") for d in dims]
    write_cases(root, "calibration", "en-US", "synthetic", cases)
    write_labels(root, "synthetic", labels)
    return root


def body_hash(body: Any) -> str:
    """sha256 of the canonical JSON of a request body."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Served:
    """One ``POST /v1/messages`` as the stub saw and answered it."""

    request_id: str | None
    body_hash: str
    status: int
    fault: str | None
    at: float

    @property
    def answered(self) -> bool:
        """A 200 that reached the client (a ``timeout`` fault answers after it gave up)."""
        return self.status == 200 and self.fault not in ("timeout", "drop")


class CountingStub(AnthropicStub):
    """:class:`AnthropicStub` that logs every answer request (see the module docstring)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.served: list[Served] = []

    def _message(self, body: Any, fault: Fault | None) -> Response:
        self._local.fault = None if fault is None else fault.kind
        return super()._message(body, fault)

    def route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Response:
        self._local.fault = None
        resp = super().route(method, path, headers, body)
        if method == "POST" and path == "/v1/messages":
            fault = self._local.fault
            if resp.status == 429 and fault is None:
                fault = "rate_limit"
            rec = Served(request_id_of(body), body_hash(body), resp.status, fault, time.monotonic())
            with self._lock:
                self.served.append(rec)
        return resp

    # -- server-side counts ------------------------------------------------------------

    def answered_counts(self) -> Counter[str]:
        """How many times each body was answered (200 that reached the client)."""
        return Counter(s.body_hash for s in self.served if s.answered)

    def duplicates(self) -> int:
        """Answers beyond the first for the same body: paid twice for one request."""
        return sum(n - 1 for n in self.answered_counts().values() if n > 1)

    def sent_by_request_id(self) -> Counter[str]:
        """Every answer request by request id (retries included)."""
        return Counter(s.request_id for s in self.served if s.request_id)


def _message(body: dict[str, Any], content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "stub"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
    }


class HostileStub(CountingStub):
    """Every answer is ``answer(body) -> (content blocks, stop_reason)``."""

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], tuple[list[dict[str, Any]], str]],
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.answer = answer

    def message_json(self, body: dict[str, Any], fault: Fault | None = None) -> dict[str, Any]:
        content, stop = self.answer(body)
        msg = _message(body, content, stop)
        msg["id"] = f"msg_hostile{next(self._ids):06d}"
        msg["usage"] = self._usage(body, 1)
        return msg
