"""The anthropic backend against the stub server (base URL) and httpx2.MockTransport."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx2
import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import JudgeError
from evalkit.judge import Ledger, judge_cases, load_ledger
from evalkit.judge.anthropic import PRICES, AnthropicBackend, is_pinned
from tests.stubs.anthropic_stub import (
    AnthropicStub,
    bad_request,
    malformed,
    overloaded,
    rate_limited,
    refusal,
    server_error,
    text_answer,
    timeout,
)

MODEL = "claude-sonnet-4-6"


def backend(stub: AnthropicStub, **kw: Any) -> AnthropicBackend:
    kw.setdefault("timeout", 3.0)
    return AnthropicBackend(MODEL, base_url=stub.base_url, backoff_base=0.01, **kw)


def run(catalogue: Catalogue, ledger: Path, b: AnthropicBackend, **kw: Any) -> pd.DataFrame:
    kw.setdefault("progress", False)
    return judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, **kw)


def one(catalogue: Catalogue, ledger: Path, b: AnthropicBackend, **kw: Any) -> pd.Series:
    """Judge the masked case alone; return its first row."""
    frame = run(catalogue, ledger, b, cases=["j-masked"], **kw)
    return frame.iloc[0]


def test_success_forced_tool_cache_and_cost(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    frame = run(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert (frame["status"] == "ok").all() and len(frame) == 11
    sent = stub.message_requests()
    assert len(sent) == 5
    body = sent[0].body
    assert body["tool_choice"] == {
        "type": "tool",
        "name": "record_scores",
        "disable_parallel_tool_use": True,
    }
    assert body["tools"][0]["strict"] is True and body["tools"][0]["name"] == "record_scores"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["model"] == MODEL and sent[0].headers["authorization"] == f"Bearer {fake_key}"
    reqs = frame.drop_duplicates("request_key")
    assert reqs["cache_read_tokens"].gt(0).any() and reqs["cache_creation_tokens"].gt(0).any()
    p = PRICES[MODEL]
    r = reqs.iloc[0]
    expected = (
        r.input_tokens * p.input
        + r.output_tokens * p.output
        + r.cache_read_tokens * p.cache_read
        + r.cache_creation_tokens * p.cache_write
    ) / 1e6
    assert r.cost_usd == pytest.approx(expected)
    assert (frame["response_model"] == MODEL).all()


def test_rerun_sends_nothing_and_needs_no_key(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    ledger = tmp_path / "l.sqlite"
    first = run(catalogue, ledger, backend(stub))
    n = len(stub.requests)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    second = run(catalogue, ledger, backend(stub))
    assert len(stub.requests) == n
    pd.testing.assert_frame_equal(first, second)


def test_no_key_is_a_clear_error_before_any_request(
    catalogue: Catalogue, stub: AnthropicStub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(JudgeError, match="no API key; set ANTHROPIC_API_KEY"):
        run(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert stub.requests == []


def test_base_url_comes_from_the_environment(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.base_url)
    frame = judge_cases(catalogue, ["j-masked"], judge=f"anthropic:{MODEL}",
                        ledger=tmp_path / "l.sqlite", progress=False)  # fmt: skip
    assert (frame["status"] == "ok").all() and len(stub.message_requests()) == 1


def test_one_malformed_answer_is_asked_again(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(malformed("bad_bin"))
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert row.status == "ok" and row.attempts == 2


@pytest.mark.parametrize(
    "variant",
    ["missing_dimension", "extra_dimension", "duplicate_dimension", "bad_bin", "extra_key",
     "wrong_type", "bad_evidence", "no_tool", "wrong_tool"],
)  # fmt: skip
def test_malformed_answers_end_unparseable_after_bounded_retries(
    variant: str, catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(*[malformed(variant)] * 3)
    ledger = tmp_path / "l.sqlite"
    frame = run(catalogue, ledger, backend(stub), cases=["j-masked"])
    assert (frame["status"] == "unparseable").all() and frame["bin"].isna().all()
    assert len(frame) == 2  # one row per requested dimension, so failures count per dimension
    assert frame.iloc[0].attempts == 3 and "attempt 3" in frame.iloc[0].error
    with Ledger(ledger) as led:
        (rec,) = led.records()
    assert rec["raw_response"] and json.loads(rec["raw_response"])["type"] == "message"
    run(catalogue, ledger, backend(stub), cases=["j-masked"])
    assert len(stub.message_requests()) == 3  # unparseable is final: not sent again


def test_json_mode_not_json_is_unparseable(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    from evalkit.judge import JudgeParams

    stub.script(malformed("not_json"))
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub, params=JudgeParams(mode="json")))
    assert row.status == "ok" and row.attempts == 2
    assert "output_config" in stub.message_requests()[0].body


def test_429_with_retry_after_is_honoured(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(rate_limited(0.4))
    t0 = time.monotonic()
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert time.monotonic() - t0 >= 0.4
    assert row.status == "ok" and row.attempts == 2


def test_529_and_500_are_retried(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(overloaded(), server_error())
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert row.status == "ok" and row.attempts == 3


def test_exhausted_retries_store_error_and_a_rerun_retries_it(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "l.sqlite"
    stub.script(overloaded(), overloaded())
    row = one(catalogue, ledger, backend(stub, max_retries=1))
    assert row.status == "error" and "529" in row.error and row.attempts == 2
    row = one(catalogue, ledger, backend(stub, max_retries=1))
    assert row.status == "ok" and row.attempts == 3


def test_a_400_is_not_retried(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(bad_request())
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert row.status == "error" and row.attempts == 1 and "400" in row.error


def test_a_timeout_is_retried(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(timeout())
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub, timeout=2.0))  # the stub holds
    # a timeout fault until the client hangs up; 2 s is ample for the normal answer after it
    assert row.status == "ok" and row.attempts == 2


@pytest.mark.parametrize("fault", [refusal(), text_answer("I can't help with rating this.")])
def test_refusals_are_their_own_status(
    fault: Any, catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    stub.script(fault)
    row = one(catalogue, tmp_path / "l.sqlite", backend(stub))
    assert row.status == "refused" and row.attempts == 1 and pd.isna(row.bin)


def test_slow_server_under_concurrency(catalogue: Catalogue, fake_key: str, tmp_path: Path) -> None:
    with AnthropicStub(latency=0.15) as stub:
        frame = run(catalogue, tmp_path / "l.sqlite", backend(stub), together=False,
                    turns="all", concurrency=3)  # fmt: skip
        assert stub.max_in_flight <= 3 and stub.max_in_flight >= 2
    assert frame["request_key"].nunique() == 13 and (frame["status"] == "ok").all()


def test_rate_limited_server_gets_everything_eventually(
    catalogue: Catalogue, fake_key: str, tmp_path: Path
) -> None:
    with AnthropicStub(rate_limit=(2, 0.3)) as stub:
        frame = run(catalogue, tmp_path / "l.sqlite", backend(stub, max_retries=8),
                    concurrency=5)  # fmt: skip
    assert (frame["status"] == "ok").all() and frame["attempts"].max() > 1


def test_max_cost_stops_before_sending(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    with pytest.raises(JudgeError, match="over --max-cost"):
        run(catalogue, tmp_path / "l.sqlite", backend(stub), max_cost=1e-6, progress=True)
    assert stub.requests == []  # the local estimate is over: not even count_tokens
    assert "(local approximation, nothing sent)" in capsys.readouterr().out  # the plan: stdout


class DenseCountStub(AnthropicStub):
    """Counts ten times the tokens the stub bills (text that tokenizes densely)."""

    def route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Any:
        resp = super().route(method, path, headers, body)
        if path == "/v1/messages/count_tokens":
            resp.body = {"input_tokens": 10 * resp.body["input_tokens"]}
        return resp


def test_max_cost_holds_to_the_count_once_consented(
    catalogue: Catalogue, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with DenseCountStub() as stub:
        b = backend(stub)
        with pytest.raises(JudgeError, match="over --max-cost"):  # fits locally, not counted
            run(catalogue, tmp_path / "l.sqlite", b, max_cost=0.15, progress=True)
        # no confirm callback is consent (a library call): counted, then nothing judged
        assert [r.path for r in stub.requests] == ["/v1/messages/count_tokens"] * 5
    out = capsys.readouterr().out
    assert "(local approximation, nothing sent)" in out and "(counted by the provider)" in out


def test_progress_line(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    stub.script(refusal())
    run(catalogue, tmp_path / "l.sqlite", backend(stub), progress=True)
    captured = capsys.readouterr()
    assert "5 to send" in captured.out and "estimated cost $" in captured.out  # the plan
    assert "judge: 5/5 calls · 0 from ledger · 1 failed · $" in captured.err  # progress
    assert "5 to send" not in captured.err


@pytest.mark.parametrize(
    ("model", "pinned"),
    [
        ("claude-sonnet-4-5-20250929", True), ("claude-haiku-4-5-20251001", True),
        ("claude-3-5-sonnet-20241022", True), ("claude-sonnet-4-6", True),
        ("claude-opus-5", True), ("claude-sonnet-5-5", True),
        ("claude-sonnet-4-5", False), ("claude-opus-4-1", False),
        ("claude-3-7-sonnet-latest", False), ("claude-sonnet-4-5-20251399", False),
        ("claude-mythos-preview", False), ("sonnet", False),
    ],
)  # fmt: skip
def test_pinned_model_rule(model: str, pinned: bool) -> None:
    assert is_pinned(model) is pinned


def test_floating_alias_refused_for_the_gate() -> None:
    with pytest.raises(JudgeError, match="floating alias"):
        AnthropicBackend("claude-sonnet-4-5", for_gate=True)
    AnthropicBackend("claude-sonnet-4-5-20250929", for_gate=True)


def test_unknown_model_has_no_cost_and_warns() -> None:
    with pytest.warns(UserWarning, match="no price known"):
        b = AnthropicBackend("claude-unknown-9-9")
    assert b.price is None


def _message(request: httpx2.Request) -> dict[str, Any]:
    body = json.loads(request.content)
    from tests.stubs.anthropic_stub import AnthropicStub as _S

    return _S().message_json(body)


def test_mock_transport_and_secrets_never_stored(
    catalogue: Catalogue, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/count_tokens"):
            return httpx2.Response(200, json={"input_tokens": 1000})
        seen.append(request)
        auth = request.headers.get("authorization", "")
        if len(seen) == 1:  # an error body that echoes the credential back
            err = {"type": "invalid_request_error", "message": f"bad header {auth}"}
            return httpx2.Response(400, json={"type": "error", "error": err})
        return httpx2.Response(200, json=_message(request))

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    ledger = tmp_path / "l.sqlite"
    b = AnthropicBackend(MODEL, http_client=client, backoff_base=0.01)
    frame = judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, progress=True)
    assert fake_key in seen[0].headers["authorization"]
    statuses = frame.drop_duplicates("request_key")["status"].value_counts().to_dict()
    assert statuses == {"ok": 4, "error": 1}
    assert "[redacted]" in frame[frame["status"] == "error"].iloc[0].error
    with Ledger(ledger) as led:
        led.export_jsonl(tmp_path / "l.jsonl")
    for path in (p for p in tmp_path.iterdir() if p.is_file()):
        assert fake_key.encode() not in path.read_bytes(), path
    captured = capsys.readouterr()
    assert fake_key not in captured.err + captured.out
    assert fake_key not in load_ledger(ledger).to_csv()
