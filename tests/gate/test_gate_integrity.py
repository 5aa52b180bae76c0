"""The gate cannot be passed on too few pairs, hollow answers or somebody else's judge.

ADR-0014 (minimum pairs, intervals within [-1, 1]) and ADR-0016 (one pinned judge).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit.agreement import cohens_kappa
from evalkit.catalogue import Catalogue
from evalkit.cli import main
from evalkit.errors import GateInputError
from evalkit.gate import evaluate
from tests.factory import build_balanced, record_ledger

PINNED = "claude-sonnet-4-5-20250929"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalogue, pd.DataFrame]:
    cat, ledger = build_balanced(tmp_path_factory.mktemp("integrity") / "catalogues", copies=4)
    live = ledger.assign(judge=f"anthropic:{PINNED}", backend="anthropic", model=PINNED)
    return cat, live.assign(response_model=PINNED)


def blocking(verdict: object, dim: str) -> set[str]:
    dims = verdict.dimensions  # type: ignore[attr-defined]
    return {r.code for r in dims[dim].reasons if r.severity in ("hard_fail", "fail")}


def test_a_pinned_live_judge_that_agrees_passes(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    verdict = evaluate(ledger, cat.labels, cat, n_resamples=100)
    assert verdict.passed, verdict.to_json(indent=1)
    assert verdict.judge == {
        "judge": f"anthropic:{PINNED}",
        "backend": "anthropic",
        "model": PINNED,
        "response_model": PINNED,
    }


def test_too_few_pairs_is_a_hard_fail_whatever_the_kappa(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, ledger = world
    assert cat.constants.gate.min_pairs == 40
    # Keep 39 self-harm pairs of 96 (labels of the dropped cases dropped too): kappa stays 1.
    keep = sorted(ledger.loc[ledger["dimension"] == "self_harm", "case_id"])[:39]
    rows = ledger[(ledger["dimension"] != "self_harm") | ledger["case_id"].isin(keep)]
    labels = [lab for lab in cat.labels if lab.dimension != "self_harm" or lab.case_id in set(keep)]
    sh = evaluate(rows, labels, cat, n_resamples=100).dimensions["self_harm"]
    assert sh.kappa == 1.0 and sh.n == 39
    # labels cut to a few pairs are not the catalogue's: exploratory, and too few either way
    found = blocking(evaluate(rows, labels, cat, n_resamples=100), "self_harm")
    assert found == {"too_few_pairs", "undeclared_labels"}
    assert sh.verdict == "FAIL"


def test_an_ok_row_without_a_bin_is_unusable_and_a_hard_fail(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    """The tampered import: results of disagreeing rows deleted, status kept at ok."""
    cat, ledger = world
    rows = ledger.copy()
    hollow = rows.index[rows["dimension"] == "escalation"][:5]
    rows.loc[hollow, "bin"] = None
    verdict = evaluate(rows, cat.labels, cat, n_resamples=100)
    esc = verdict.dimensions["escalation"]
    assert "ok_without_bin" in blocking(verdict, "escalation")
    whole = evaluate(ledger, cat.labels, cat, n_resamples=100).dimensions["escalation"]
    assert esc.counts["unusable"] == 5 and esc.n == whole.n - 5


def test_mixed_judges_fail_unless_one_is_named(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    other = "anthropic:claude-opus-4-1-20250805"
    cheat = ledger.assign(
        judge=other, model=other.split(":")[1], response_model=other.split(":")[1]
    )
    cheat["created_at"] = "2027-01-01T00:00:00+00:00"  # the latest answer per case wins
    mixed = pd.concat([ledger.assign(created_at="2026-12-01T00:00:00+00:00"), cheat])
    verdict = evaluate(mixed, cat.labels, cat, n_resamples=100)
    assert not verdict.passed
    assert all("mixed_judges" in blocking(verdict, d) for d in verdict.dimensions)
    named = evaluate(mixed, cat.labels, cat, n_resamples=100, judge_spec=f"anthropic:{PINNED}")
    assert named.passed and named.judge["model"] == PINNED
    notes = {r.code for r in named.dimensions["self_harm"].reasons}
    assert "other_judges_set_aside" in notes
    with pytest.raises(GateInputError, match="judges found"):
        evaluate(mixed, cat.labels, cat, judge_spec="anthropic:nobody")


@pytest.mark.parametrize(
    ("model", "response_model", "code"),
    [
        ("claude-sonnet-4-5", PINNED, "floating_alias"),
        ("claude-sonnet-4-5-latest", "claude-sonnet-4-5-latest", "floating_alias"),
        (PINNED, "claude-haiku-4-5-20251001", "response_model_mismatch"),
        (PINNED, None, "unverified_model"),
    ],
)
def test_an_unpinned_or_swapped_model_is_a_hard_fail(
    world: tuple[Catalogue, pd.DataFrame], model: str, response_model: str | None, code: str
) -> None:
    cat, ledger = world
    rows = ledger.assign(judge=f"anthropic:{model}", model=model, response_model=response_model)
    verdict = evaluate(rows, cat.labels, cat, n_resamples=100)
    assert all(code in blocking(verdict, d) for d in verdict.dimensions)


def test_the_baseline_cannot_gate_a_launch(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    rows = ledger.assign(judge="baseline", backend="baseline", model="baseline-v1")
    verdict = evaluate(rows.assign(response_model=None), cat.labels, cat, n_resamples=100)
    assert all("reference_judge" in blocking(verdict, d) for d in verdict.dimensions)


def test_the_cli_names_the_judge_and_takes_judge_spec(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat, _ = world
    path = tmp_path / "ledger.sqlite"
    record_ledger(cat, path, model=PINNED)
    record_ledger(cat, path, model="x-20250101", response_model="x")
    base = ["gate", "--catalogue", str(cat.root), "--ledger", str(path), "--json"]
    assert main(base) == 1
    assert main([*base, "--judge-spec", f"anthropic:{PINNED}"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.rindex('{\n  "overall"') :])["judge"]["model"] == PINNED


def test_wald_intervals_stay_within_minus_one_and_one() -> None:
    # 10 pairs, one disagreement: kappa 0.8 with a Wald half-width over 0.2 (past 1 unclipped).
    judge = ["low"] * 5 + ["high"] * 5
    human = ["low"] * 5 + ["high"] * 4 + ["low"]
    k = cohens_kappa(judge, human, ["low", "partial", "high"])
    assert k.value == pytest.approx(0.8)
    assert k.ci_high == 1.0 and k.ci_low is not None and -1.0 <= k.ci_low < 0.8
    assert any("clipped to [-1, 1]" in note for note in k.notes)
