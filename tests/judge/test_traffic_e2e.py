"""The traffic controller end to end, against the stubs' rate limiters.

Counts, never wall time: a loaded machine sends more slowly, which only means fewer
429s; the bounds are generous. The deadline test holds every call behind a 429 whose
retry-after (30 s) is far beyond the deadline (1 s), so it cannot race.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.cli import main
from evalkit.judge import build_requests, judge_cases, load_ledger
from evalkit.judge._prompt import JudgeIdentity
from evalkit.judge.anthropic import AnthropicBackend
from evalkit.judge.openai import OpenAIBackend
from evalkit.traffic import TrafficController
from tests.faults._support import MODEL, CountingStub, synthetic_catalogue
from tests.stubs._server import Response, rate_limited
from tests.stubs.anthropic_stub import AnthropicStub
from tests.stubs.openai_stub import OpenAIStub

N_CASES = 60


@pytest.fixture
def many(tmp_path: Path) -> Catalogue:
    return load(synthetic_catalogue(tmp_path / "many", N_CASES, prefix="tr"))


@pytest.mark.parametrize("headers", [True, False], ids=["headers", "no-headers"])
def test_high_concurrency_against_a_limit_ends_without_errors_and_few_429s(
    headers: bool, many: Catalogue, fake_key: str, tmp_path: Path
) -> None:
    with CountingStub(latency=0.05, rate_limit=(10, 0.5), ratelimit_headers=headers) as stub:
        b = AnthropicBackend(MODEL, base_url=stub.base_url, backoff_base=0.01, max_retries=2)
        frame = judge_cases(many, judge=b.spec, ledger=tmp_path / "l.sqlite", backend=b,
                            concurrency=64, progress=False)  # fmt: skip
        assert stub.wait_idle()
        served = list(stub.served)
    requests = frame.drop_duplicates("request_key")
    assert len(requests) == N_CASES and (requests["status"] == "ok").all()
    assert stub.duplicates() == 0
    rate_limited_429 = sum(s.status == 429 for s in served)
    # every 429 was sent again (attempts count them) and none used the retry budget of 2
    assert int((requests["attempts"] - 1).sum()) == rate_limited_429 == stub.rate_limited
    bound = 0.10 if headers else 0.5  # pacing to the headers vs AIMD alone
    assert rate_limited_429 <= bound * len(served), (rate_limited_429, len(served))
    assert stub.max_in_flight <= 64


def test_openai_headers_pace_the_openai_backend(many: Catalogue, tmp_path: Path) -> None:
    with OpenAIStub(latency=0.05, rate_limit=(10, 0.5)) as stub:
        b = OpenAIBackend(stub.base_url, "m", backoff_base=0.01, max_retries=1)
        frame = judge_cases(many, judge=b.spec, ledger=tmp_path / "l.sqlite", backend=b,
                            concurrency=32, progress=False)  # fmt: skip
        assert stub.wait_idle()
        sent = len(stub.completion_requests())
    requests = frame.drop_duplicates("request_key")
    assert (requests["status"] == "ok").all() and len(requests) == N_CASES
    assert stub.rate_limited <= 0.10 * sent
    assert b.traffic.budgets.per_minute("requests") == 1200  # learnt from x-ratelimit-*


def test_deadline_ends_waiting_calls_in_error_and_a_rerun_sends_exactly_those(
    catalogue: Catalogue, fake_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    ledger = tmp_path / "l.sqlite"
    with CountingStub() as stub:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.base_url)
        stub.script(rate_limited(30.0))  # the first answer: wait 30 s, far past the deadline
        base = ["judge", "--judge", f"anthropic:{MODEL}", "--yes", "--ledger", str(ledger),
                "--catalogue", str(catalogue.root)]  # fmt: skip
        assert main([*base, "--deadline", "1", "--concurrency", "1"]) == 1
        err = capsys.readouterr().err
        assert "ended in error; re-run to retry them" in err
        rows = load_ledger(ledger).drop_duplicates("request_key")
        assert len(rows) == 5 and (rows["status"] == "error").all()
        assert rows["error"].str.contains("run deadline of 1 s (--deadline)", regex=False).all()
        assert sorted(rows["attempts"]) == [0, 0, 0, 0, 1]  # one 429, four never sent
        assert len(stub.served) == 1
        assert main([*base, "--deadline", "60"]) == 0
        assert stub.wait_idle()
        second = stub.served[1:]
    assert sorted(s.request_id or "" for s in second) == sorted(rows["request_id"])
    assert all(s.status == 200 for s in second)
    assert (load_ledger(ledger).drop_duplicates("request_key")["status"] == "ok").all()


def test_a_huge_retry_after_costs_at_most_the_pause_cap(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str
) -> None:
    """An hour of retry-after, capped at the controller's ``max_pause`` (here 0.05 s)."""
    b = AnthropicBackend(MODEL, base_url=stub.base_url, max_retries=0)
    b.traffic = TrafficController(max_pause=0.05)
    identity = JudgeIdentity(b.spec, b.kind, b.model, b.params)
    dims = catalogue.constants.gated_dimensions
    (req,) = build_requests(catalogue, [catalogue.case("j-masked")], dims, identity, b"s")
    stub.script(rate_limited(3600.0), rate_limited(3600.0))

    async def call() -> Any:
        try:
            return await b.call(req)
        finally:
            await b.aclose()

    reply = asyncio.run(call())
    assert reply.kind == "answer" and reply.attempts == 3  # no retry budget was needed
    assert b.traffic.window.episodes == 2 and b.traffic.window.rate_limited == 2


class GarbageHeaders(AnthropicStub):
    """Answers normally, with rate-limit headers no controller should believe."""

    def route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Response:
        resp = super().route(method, path, headers, body)
        resp.headers.update({
            "anthropic-ratelimit-requests-limit": "-7",
            "anthropic-ratelimit-input-tokens-limit": "1000",
            "anthropic-ratelimit-input-tokens-remaining": "99999",
            "anthropic-ratelimit-input-tokens-reset": "tomorrow",
        })  # fmt: skip
        return resp


def test_garbage_rate_limit_headers_are_noted_never_a_crash(
    catalogue: Catalogue, fake_key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with GarbageHeaders() as stub:
        b = AnthropicBackend(MODEL, base_url=stub.base_url)
        frame = judge_cases(catalogue, judge=b.spec, ledger=tmp_path / "l.sqlite", backend=b,
                            progress=True)  # fmt: skip
    assert (frame.drop_duplicates("request_key")["status"] == "ok").all()
    assert b.traffic.figures()["header_notes"] == 15  # three bad values on five answers
    err = capsys.readouterr().err
    assert "ignored 15 malformed rate-limit header value(s)" in err
    assert "rate-limit header(s) ignored" in err  # on the progress line too


def test_progress_shows_the_controller(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    stub.script(rate_limited(0.01))
    b = AnthropicBackend(MODEL, base_url=stub.base_url)
    judge_cases(catalogue, judge=b.spec, ledger=tmp_path / "l.sqlite", backend=b, progress=True)
    out = capsys.readouterr()
    assert "5 to send" in out.out and "5 to send" not in out.err
    last = [line for line in out.err.splitlines() if line.startswith("judge: 5/5")][-1]
    assert "0 in flight (window" in last and "req/s" in last
    assert "1 × 429 in 1 episode(s)" in last and "$" in last


def test_cli_limit_flags_are_checked(
    catalogue: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["judge", "--judge", "baseline", "--ledger", str(tmp_path / "l.sqlite"),
            "--catalogue", str(catalogue.root)]  # fmt: skip
    assert main([*base, "--rpm", "0"]) == 2
    assert "--rpm 0.0 is not a positive number" in capsys.readouterr().err
    assert main([*base, "--deadline", "-1"]) == 2
    assert "--deadline -1.0 s is not positive" in capsys.readouterr().err
    assert main([*base, "--concurrency", "0"]) == 2
    assert main([*base, "--rpm", "600", "--input-tpm", "1e6", "--output-tpm", "1e5"]) == 0
