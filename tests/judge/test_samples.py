"""Repeat samples (ADR-0027): K rows per request, nothing paid twice, stability evidence,
and a gate that reads repeats together instead of taking the latest."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.cli import main
from evalkit.gate import evaluate
from evalkit.gate._pairs import gated_answers
from evalkit.judge import load_ledger
from tests.factory import SHIPPED, agreeing_ledger
from tests.stubs.anthropic_stub import AnthropicStub

MODEL = "claude-sonnet-4-6"


def test_samples_3_records_3_rows_per_request_and_a_rerun_sends_nothing(
    catalogue: Catalogue,
    tmp_path: Path,
    stub: AnthropicStub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    ledger = tmp_path / "l.sqlite"
    args = ["judge", "--catalogue", str(catalogue.root), "--judge", f"anthropic:{MODEL}",
            "--ledger", str(ledger), "--samples", "3", "--yes", "--quiet"]  # fmt: skip
    assert main(args) == 0
    frame = load_ledger(ledger)
    requests = frame.drop_duplicates("request_key")
    per_content = requests.groupby(["case_id", "turn"])["sample"].apply(sorted)
    assert all(s == [0, 1, 2] for s in per_content)
    sent = len(stub.message_requests())
    assert sent == len(requests)
    assert main(args) == 0
    assert len(stub.message_requests()) == sent  # nothing twice
    assert frame["temperature"].isna().all()  # not sent: the provider's default, recorded

    labels = catalogue.labels
    capsys.readouterr()
    gate = main(["gate", "--catalogue", str(catalogue.root), "--ledger", str(ledger), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert gate in (0, 1)
    stab = out["dimensions"]["self_harm"]["evidence"]["stability"]
    assert stab["samples"] == 3 and len(stab["per_sample"]) == 3
    assert 0 <= stab["share_matching_gated_verdict"] <= 1
    assert labels  # the catalogue has labels for every case


def test_the_gated_answer_is_the_modal_bin_with_ties_to_the_lower() -> None:
    rows = pd.DataFrame(
        {
            "case_id": ["a", "a", "a", "b", "b", "c", "c"],
            "dimension": ["d"] * 7,
            "status": ["ok", "ok", "ok", "ok", "ok", "error", "ok"],
            "bin": ["high", "low", "high", "high", "partial", None, "high"],
            "created_at": list("1234567"),
        }
    )
    got = gated_answers(rows, ("low", "partial", "high")).set_index("case_id")["bin"]
    assert got.to_dict() == {"a": "high", "b": "partial", "c": "high"}


@pytest.fixture(scope="module")
def shipped() -> tuple[Catalogue, pd.DataFrame]:
    cat = load(SHIPPED)
    live = agreeing_ledger(cat).assign(
        judge=f"anthropic:{MODEL}", backend="anthropic", model=MODEL, response_model=MODEL
    )
    return cat, live


@pytest.mark.slow
def test_rerolling_only_the_disagreements_is_a_named_hard_fail(
    shipped: tuple[Catalogue, pd.DataFrame],
) -> None:
    """A judge that answers at random, re-asked only where it disagreed until it agrees:
    the latest answer would pass; the declared rule and the concentration check do not."""
    cat, oracle = shipped
    oracle = oracle.assign(request_key=oracle["request_key"] + "-" + oracle["dimension"])
    bins = list(cat.constants.bins)
    rng = pd.Series(range(len(oracle))).sample(frac=1, random_state=1).to_numpy()
    first = oracle.assign(bin=[bins[i % 3] for i in rng], created_at="2026-12-01T00:00:00")
    first["request_key"] = first["request_key"] + "-0"
    wrong = first[first["bin"].to_numpy() != oracle["bin"].to_numpy()]
    again = oracle[oracle["request_key"].isin(wrong["request_key"].str[:-2])].assign(
        created_at="2026-12-02T00:00:00"
    )
    again["request_key"] = again["request_key"] + "-1"
    verdict = evaluate(pd.concat([first, again]), cat.labels, cat, n_resamples=50)
    assert not verdict.passed
    codes = {r.code for r in verdict.dimensions["self_harm"].reasons}
    assert "cherry_picked_repeats" in codes
