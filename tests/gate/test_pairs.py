"""``evalkit.gate.pairs``: the gate's pairs, in the columns every agreement function takes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.agreement import agreement_table, cohens_kappa
from evalkit.catalogue import GATED_STRATA, Catalogue, load
from evalkit.errors import GateInputError
from evalkit.gate import PAIR_COLUMNS, breakdown, evaluate, pairs
from tests.factory import agreeing_ledger, build_balanced


@pytest.fixture
def world(tmp_path: Path) -> tuple[Catalogue, pd.DataFrame]:
    return build_balanced(tmp_path / "catalogues")


def test_columns_are_documented_and_named_for_the_agreement_functions(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, ledger = world
    frame = pairs(ledger, cat)
    assert tuple(frame.columns) == PAIR_COLUMNS
    assert {"judge", "human"} <= set(frame.columns)
    for col in PAIR_COLUMNS:
        assert f"``{col}``" in (pairs.__doc__ or ""), col
    table = agreement_table(frame, cat.constants.bins)  # no column arguments needed
    assert list(table["dimension"]) == list(cat.constants.gated_dimensions)
    assert breakdown(frame, cat.constants, "locale")["n"].sum() == len(frame)


def test_gated_complete_pairs_give_the_gate_s_kappa(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    bins = list(cat.constants.bins)
    # break agreement on a few rows, make one answer unusable, so kappa is not trivially 1
    ledger = ledger.copy()
    sh = ledger["dimension"] == "self_harm"
    ledger.loc[sh & (ledger["bin"] == "partial"), "bin"] = "high"
    ledger.loc[ledger.index[sh][0], ["status", "bin"]] = ["unparseable", None]
    verdict = evaluate(ledger, cat.labels, cat)
    frame = pairs(ledger, cat, dimension="self_harm", complete=True)
    assert set(frame["stratum"]) <= set(GATED_STRATA)
    kappa = cohens_kappa(list(frame["judge"]), list(frame["human"]), bins)
    assert kappa.value == pytest.approx(verdict.dimensions["self_harm"].kappa)
    assert len(frame) == verdict.dimensions["self_harm"].n
    every = pairs(ledger, cat, dimension="self_harm")
    assert len(every) == len(frame) + 1  # the unparseable row stays, judge missing
    assert every["judge"].isna().sum() == 1
    table = agreement_table(every, bins)
    assert table.loc[0, "n_missing"] == 1
    assert table.loc[0, "kappa"] == pytest.approx(kappa.value)


def test_filters_split_dimension_and_strata(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    gated = pairs(ledger, cat, dimension=["escalation", "faithfulness"])
    assert set(gated["dimension"]) == {"escalation", "faithfulness"}
    assert set(gated["split"]) == {"calibration"}
    assert len(pairs(ledger, cat, split=None)) == len(pairs(ledger, cat))  # one split here


def test_gated_only_leaves_diagnostic_and_canary_cases_out() -> None:
    shipped = load(Path(__file__).parents[2] / "catalogues")
    ledger = agreeing_ledger(shipped)
    every = pairs(ledger, shipped, gated_only=False)
    assert set(every["stratum"]) - set(GATED_STRATA)  # the shipped catalogue has both kinds
    gated = pairs(ledger, shipped)
    assert set(gated["stratum"]) <= set(GATED_STRATA)
    assert len(gated) == every["stratum"].isin(GATED_STRATA).sum()


def test_rows_under_other_hashes_are_left_out(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    stale = ledger.copy()
    stale.loc[stale["dimension"] == "escalation", "framing_hash"] = "0" * 64
    frame = pairs(stale, cat, dimension="escalation")
    assert frame["status"].isna().all() and frame["judge"].isna().all()  # labels only


def test_a_bin_outside_the_frozen_bins_is_missing(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    broken = ledger.copy()
    broken.loc[broken.index[0], "bin"] = "medium"
    frame = pairs(broken, cat, split=None, gated_only=False)
    row = frame[
        (frame["case_id"] == broken.loc[broken.index[0], "case_id"])
        & (frame["dimension"] == broken.loc[broken.index[0], "dimension"])
    ]
    assert row["judge"].isna().all() and (row["status"] == "ok").all()
    agreement_table(frame, cat.constants.bins)  # accepted as is: no stray value


def test_one_judge_at_a_time(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    other = ledger.assign(judge="other", created_at="2099-01-01")
    mixed = pd.concat([ledger.assign(created_at="2000-01-01"), other], ignore_index=True)
    with pytest.raises(GateInputError, match="2 judges"):
        pairs(mixed, cat)
    with pytest.raises(GateInputError, match="nobody"):
        pairs(mixed, cat, judge_spec="nobody")
    mine = pairs(mixed, cat, judge_spec="test")
    assert len(mine) == len(pairs(ledger, cat))


def test_rationale_is_carried(world: tuple[Catalogue, pd.DataFrame]) -> None:
    cat, ledger = world
    frame = pairs(ledger.assign(rationale="because <b>"), cat)
    assert (frame["rationale"] == "because <b>").all()


def _modal_reference(group: pd.DataFrame, bins: tuple[str, ...] | None) -> pd.Series:
    """ADR-0027 read literally, one group at a time (rows oldest first)."""
    ok = group[group["status"] == "ok"]
    ok = ok[ok["bin"].isin(bins)] if bins is not None else ok[ok["bin"].notna()]
    if ok.empty:
        return group.iloc[-1]
    counts = {b: int((ok["bin"] == b).sum()) for b in dict.fromkeys(ok["bin"])}
    tied = [b for b, n in counts.items() if n == max(counts.values())]
    best = min(tied, key=bins.index) if bins is not None else tied[0]
    return ok[ok["bin"] == best].iloc[0]


@pytest.mark.parametrize("bins", [("low", "partial", "high"), None])
def test_gated_answers_is_the_declared_rule_on_many_repeated_groups(
    bins: tuple[str, ...] | None,
) -> None:
    """The one-pass reading of repeated answers (issue 29: a pandas step per group took
    seconds on the shipped ledger) keeps, per case and dimension, the row ADR-0027 names."""
    from evalkit.gate._pairs import gated_answers

    rng = np.random.default_rng(3)
    n = 3000
    rows = pd.DataFrame(
        {
            "case_id": [f"c{i}" for i in rng.integers(0, 600, n)],
            "dimension": rng.choice(["self_harm", "escalation"], n),
            "status": rng.choice(["ok", "ok", "ok", "unparseable", "error"], n),
            "bin": rng.choice(np.array(["low", "partial", "high", "hoch", None], dtype=object), n),
            "row": range(n),
        }
    )
    got = gated_answers(rows, bins)
    want = [
        _modal_reference(group, bins)["row"]
        for _, group in rows.groupby(["case_id", "dimension"], sort=False)
    ]
    assert sorted(got["row"]) == sorted(want)
    assert got.index.is_unique and len(got) == len(want)
