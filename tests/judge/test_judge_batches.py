"""Message Batches mode: create, poll, collect by custom_id, resume after a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import JudgeError
from evalkit.judge import Ledger, judge_cases
from evalkit.judge.anthropic import AnthropicBackend
from tests.stubs.anthropic_stub import AnthropicStub, request_id_of

MODEL = "claude-sonnet-4-6"


def run(catalogue: Catalogue, ledger: Path, stub: AnthropicStub, **kw: Any) -> pd.DataFrame:
    b = AnthropicBackend(MODEL, base_url=stub.base_url, backoff_base=0.01, timeout=3.0)
    kw.setdefault("batch_poll_interval", 0.02)
    return judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, batch=True,
                       progress=False, **kw)  # fmt: skip


def test_batch_create_retrieve_results(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "l.sqlite"
    frame = run(catalogue, ledger, stub)
    assert (frame["status"] == "ok").all() and frame["request_key"].nunique() == 5
    assert stub.message_requests() == []  # nothing went through the direct endpoint
    (batch_id,) = stub.batches
    assert (frame["batch_id"] == batch_id).all()
    custom_ids = {item["custom_id"] for item in stub.batches[batch_id]["requests"]}
    assert custom_ids == set(frame["request_key"])
    item = stub.batches[batch_id]["requests"][0]["params"]
    assert item["tool_choice"]["name"] == "record_scores" and item["model"] == MODEL
    with Ledger(ledger) as led:
        assert led.open_batches(f"anthropic:{MODEL}") == {}
    # batch results are billed at half price
    direct = AnthropicBackend(MODEL)
    r = frame.drop_duplicates("request_key").iloc[0]
    from evalkit.judge._base import Usage

    usage = Usage(r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_creation_tokens)
    assert r.cost_usd == pytest.approx(direct.cost(usage) * 0.5)
    run(catalogue, ledger, stub)
    assert len(stub.batches) == 1  # a re-run sends nothing


def test_a_restart_resumes_the_same_batch(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "l.sqlite"
    stub.hold_batches = True
    with pytest.raises(JudgeError, match=r"still in progress.*resume"):
        run(catalogue, ledger, stub, batch_timeout=0.1)
    (batch_id,) = stub.batches
    with Ledger(ledger) as led:
        assert list(led.open_batches(f"anthropic:{MODEL}")) == [batch_id]
        assert led.records() == []
    b = AnthropicBackend(MODEL, base_url=stub.base_url)
    with pytest.raises(JudgeError, match="re-run with --batch"):
        judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, progress=False)
    stub.release_batches()
    frame = run(catalogue, ledger, stub)
    assert list(stub.batches) == [batch_id]  # polled again, never resubmitted
    assert (frame["status"] == "ok").all() and frame["request_key"].nunique() == 5
    ids = stub.request_ids()
    assert len(ids) == len(set(ids)) == 5


def test_errored_batch_items_are_retried_in_a_new_batch(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "l.sqlite"
    first = run(catalogue, ledger, stub, cases=["j-masked", "j-emergency"])
    failed_key = first["request_key"].iloc[0]
    # recreate: fail one item on a fresh ledger
    ledger2 = tmp_path / "l2.sqlite"
    stub.batch_errors = {failed_key}
    frame = run(catalogue, ledger2, stub, cases=["j-masked", "j-emergency"])
    statuses = frame.drop_duplicates("request_key").set_index("request_key")["status"]
    assert statuses[failed_key] == "error"
    assert "batch item errored" in frame[frame["status"] == "error"].iloc[0].error
    stub.batch_errors = set()
    again = run(catalogue, ledger2, stub, cases=["j-masked", "j-emergency"])
    assert (again["status"] == "ok").all()
    last = list(stub.batches.values())[-1]["requests"]
    assert [item["custom_id"] for item in last] == [failed_key]
    assert request_id_of(last[0]["params"]) == failed_key[:8]


def test_batch_needs_the_anthropic_backend(catalogue: Catalogue, tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="--batch needs the anthropic backend"):
        judge_cases(catalogue, judge="baseline", ledger=tmp_path / "l.sqlite", batch=True)
