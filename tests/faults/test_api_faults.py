"""Fault suite, API faults: 30% of requests fail at random, the run still completes.

300 distinct judge requests go through ``AnthropicBackend`` (the real SDK) to the stub
Messages API, which answers about 30% of the requests it receives with a fault drawn
with a fixed seed: 429 with retry-after, 500, 502, 503, 529, a timeout (the stub holds
the request past the client's timeout), or a dropped connection. The run must end with
every request answered ``ok`` exactly once, no duplicate stored result, and the retry
counts in the ledger's ``attempts`` equal to what the stub actually received.

The counts do not race the clock: a ``timeout`` fault holds its request until the
client hangs up (so the client always times out, however loaded the machine), the
client timeout is generous (a normal answer is never mistaken for a timeout), and the
stub's log is read only once it is idle (every request the client sent is in it).

Also: a 200 whose body is not a well-formed Message (a proxy's HTML page, ``{}``, an
error object sent with 200, a message without usage or content, ...) must be recorded
for its request (as ``error``, to be retried by a re-run, or ``unparseable``) and must
not stop the run.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import load
from evalkit.judge import build_requests, judge_cases, load_ledger
from evalkit.judge._prompt import JudgeIdentity
from evalkit.judge.anthropic import AnthropicBackend
from tests.faults._support import MODEL, CountingStub, synthetic_catalogue
from tests.stubs._server import Fault, Response
from tests.stubs.anthropic_stub import (
    ok,
    overloaded,
    rate_limited,
    request_id_of,
    server_error,
    timeout,
)

N_CASES = 300
FAULT_SHARE = 0.30
SEED = 20261130
CLIENT_TIMEOUT = 3.0
FAULTS = (
    lambda: rate_limited(0.05),
    lambda: Fault("status", status=429, error_type="rate_limit_error"),  # no retry-after
    server_error,
    lambda: Fault("status", status=502, error_type="api_error"),
    lambda: Fault("status", status=503, error_type="api_error"),
    overloaded,
    lambda: overloaded(0.02),
    timeout,
    lambda: Fault("drop"),
)


def fault_script(n: int, seed: int) -> list[Fault]:
    """``n`` answers, each a fault with probability FAULT_SHARE (fixed seed)."""
    rng = random.Random(seed)
    return [rng.choice(FAULTS)() if rng.random() < FAULT_SHARE else ok() for _ in range(n)]


@pytest.mark.slow
def test_thirty_percent_faults_every_result_once_retries_recorded(
    fake_key: str, tmp_path: Path
) -> None:
    catalogue = load(synthetic_catalogue(tmp_path / "catalogue", N_CASES, prefix="af"))
    ledger = tmp_path / "ledger.sqlite"
    script = fault_script(4 * N_CASES, SEED)
    with CountingStub(hang_s=600.0) as stub:
        stub.script(*script)
        backend = AnthropicBackend(
            MODEL,
            base_url=stub.base_url,
            timeout=CLIENT_TIMEOUT,
            backoff_base=0.01,
            max_retries=10,  # 0.3**11: a request failing every attempt is not expected
        )
        frame = judge_cases(catalogue, judge=backend.spec, ledger=ledger, backend=backend,
                            concurrency=8, progress=False)  # fmt: skip
        assert stub.wait_idle(), "the stub still holds connections after the run"
        served = list(stub.served)
        received = stub.sent_by_request_id()
        answered = stub.answered_counts()
        consumed = len(script) - stub.pending_faults()

    # the faults really happened, in the mix asked for
    faulted = [s for s in served if not s.answered]
    assert len(served) == consumed and len(faulted) == sum(f.kind != "none" for f in
                                                           script[:consumed])  # fmt: skip
    assert 0.2 < len(faulted) / len(served) < 0.4
    kinds = {s.fault or str(s.status) for s in faulted}
    assert {"status", "timeout", "drop"} <= kinds

    # every result, once
    requests = frame.drop_duplicates("request_key")
    assert len(requests) == N_CASES and requests["request_id"].is_unique
    assert (requests["status"] == "ok").all(), requests["error"].dropna().head()
    assert frame["bin"].notna().all() and len(frame) == 2 * N_CASES
    assert not frame.duplicated(["request_key", "dimension"]).any()
    db = sqlite3.connect(ledger)
    try:
        n_requests, n_results = db.execute(
            "SELECT (SELECT COUNT(*) FROM requests), (SELECT COUNT(*) FROM results)"
        ).fetchone()
    finally:
        db.close()
    assert (n_requests, n_results) == (N_CASES, 2 * N_CASES)
    # the stub answered each body exactly once: nothing was paid for twice
    assert sorted(answered.values()) == [1] * N_CASES

    # retry counts recorded: the ledger's attempts are what the stub received, per request
    attempts = dict(zip(requests["request_id"], requests["attempts"], strict=True))
    assert attempts == dict(received)
    assert int((requests["attempts"] - 1).sum()) == len(faulted)
    assert requests["attempts"].max() > 1
    reloaded = load_ledger(ledger).drop_duplicates("request_key")
    assert reloaded.set_index("request_id")["attempts"].to_dict() == attempts


# -- a 200 whose body is not a Message -----------------------------------------------------

_MSG = {"id": "msg_x", "type": "message", "role": "assistant", "model": MODEL,
        "stop_reason": "end_turn", "stop_sequence": None}  # fmt: skip
_USAGE = {"input_tokens": 10, "output_tokens": 10}
GARBAGE_200 = {
    "body_not_json": Response(200, raw=b"<html>gateway says hello</html>"),
    "empty_object": Response(200, {}),
    "json_null": Response(200, None),
    "json_list": Response(200, []),
    "error_object_with_200": Response(
        200, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    ),
    "message_without_usage": Response(200, {**_MSG, "content": []}),
    "message_without_content": Response(200, {**_MSG, "usage": _USAGE}),
    "content_is_a_string": Response(200, {**_MSG, "content": "high", "usage": _USAGE}),
    "text_block_without_text": Response(
        200, {**_MSG, "content": [{"type": "text"}], "usage": _USAGE}
    ),
    "usage_tokens_null": Response(
        200, {**_MSG, "content": [], "usage": {"input_tokens": None, "output_tokens": None}}
    ),
}


class GarbageFor(CountingStub):
    """Answers every request for one request id with a fixed 200 response."""

    def __init__(self, target: str, garbage: Response, **options: Any) -> None:
        super().__init__(**options)
        self.target, self.garbage = target, garbage

    def _message(self, body: Any, fault: Fault | None) -> Response:
        if request_id_of(body) == self.target:
            self._local.fault = "garbage"
            return self.garbage
        return super()._message(body, fault)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("kind", list(GARBAGE_200))
def test_a_200_that_is_not_a_message_is_recorded_not_a_crash(
    kind: str, fake_key: str, tmp_path: Path
) -> None:
    catalogue = load(synthetic_catalogue(tmp_path / "catalogue", 12, prefix="g"))
    ledger = tmp_path / "ledger.sqlite"
    crashed: BaseException | None = None
    with GarbageFor("", GARBAGE_200[kind], latency=0.2) as stub:
        backend = AnthropicBackend(MODEL, base_url=stub.base_url, timeout=5.0,
                                   backoff_base=0.01, max_retries=1)  # fmt: skip
        # The request id of case g000001 is a content hash (it moves with the rubrics in
        # force), so it is computed, not pinned; the salt only affects the nonce.
        identity = JudgeIdentity(backend.spec, backend.kind, backend.model, backend.params)
        dims = catalogue.constants.gated_dimensions
        (first,) = build_requests(catalogue, [catalogue.case("g000001")], dims, identity, b"s")
        target = stub.target = first.request_id
        try:
            frame = judge_cases(catalogue, judge=backend.spec, ledger=ledger, backend=backend,
                                concurrency=4, progress=False)  # fmt: skip
        except Exception as exc:
            crashed = exc
        assert stub.wait_idle(), "the stub still holds connections after the run"
        answered = {s.request_id for s in stub.served if s.answered and s.fault is None}
        assert target in set(stub.sent_by_request_id())
    lost = answered - set(load_ledger(ledger)["request_id"])
    assert crashed is None, (
        f"the run crashed ({type(crashed).__name__}: {crashed}); {len(lost)} answered "
        "result(s) were never recorded"
    )
    assert not lost
    requests = frame.drop_duplicates("request_key").set_index("request_id")
    assert len(requests) == 12
    assert requests.loc[target, "case_id"] == "g000001"
    assert requests.loc[target, "status"] in ("error", "unparseable")
    assert frame.loc[frame["request_id"] == target, "bin"].isna().all()
    assert (requests.drop(index=target)["status"] == "ok").all()
