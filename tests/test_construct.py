"""Construct tools: rubric version comparison and the same-call view."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.construct import compare_versions, same_call_view
from evalkit.gate import evaluate
from tests.factory import build_balanced as build


def _as_v1(cat: Catalogue, ledger: pd.DataFrame) -> pd.DataFrame:
    """``ledger``'s self-harm rows as if judged under rubric v1, benign rows scored high."""
    v1 = ledger.copy()
    sh = v1["dimension"] == "self_harm"
    benign = v1["case_id"].isin(
        [c.id for c in cat.cases if c.stratum in ("benign", "medical_emergency")]
    )
    v1.loc[benign & sh, "bin"] = "high"
    v1.loc[sh, "rubric_hash"] = cat.rubric("self_harm", "v1").content_hash(cat.constants.bins)
    v1.loc[sh, "rubric_version"] = "v1"
    return v1


def test_v1_against_v3_shows_the_construct_failure(tmp_path: Path) -> None:
    cat, v3 = build(tmp_path / "catalogues", copies=2)
    v1 = _as_v1(cat, v3)
    benign = v1["case_id"].isin(
        [c.id for c in cat.cases if c.stratum in ("benign", "medical_emergency")]
    )
    out = compare_versions(v1, v3, cat, "self_harm")
    confusion = out["confusion"]
    n_absent = int(benign.sum() / 3)  # three dimensions per case in the ledger
    assert confusion.loc["high", "low"] == n_absent
    by = out["by_stratum"].set_index("stratum")
    assert by.loc["benign", "v1 high"] == 1.0 and by.loc["benign", "v3 low"] == 1.0
    assert by.loc["benign", "moved_down"] == by.loc["benign", "n"]
    agreement = out["agreement"].set_index("version")
    assert agreement.loc["v3", "kappa"] == 1.0
    assert agreement.loc["v1", "kappa"] < 0.6
    assert list(out["marginals"].index) == ["low", "partial", "high"]


def test_confusion_rows_are_the_first_version_and_its_arrows_say_so(tmp_path: Path) -> None:
    """#28: the axis arrows were reversed (``v1 →`` on the rows). Hand-made: v1 equals v3
    except on two cases v3 puts low and v1 high, so only cell (v1 high, v3 low) is off the
    diagonal; the rows are read down (``v1 ↓``), the columns across (``v3 →``)."""
    cat, v3 = build(tmp_path / "catalogues", copies=1)
    v1 = _as_v1(cat, v3)
    sh = v1["dimension"] == "self_harm"
    v1.loc[sh, "bin"] = v3.loc[sh, "bin"]
    moved = sorted(v3.loc[sh & (v3["bin"] == "low"), "case_id"])[:2]
    v1.loc[sh & v1["case_id"].isin(moved), "bin"] = "high"
    confusion = compare_versions(v1, v3, cat, "self_harm")["confusion"]
    assert (confusion.index.name, confusion.columns.name) == ("v1 ↓", "v3 →")
    assert list(confusion.index) == list(confusion.columns) == ["low", "partial", "high"]
    off_diagonal = {
        (r, c): int(confusion.loc[r, c])
        for r in confusion.index
        for c in confusion.columns
        if r != c and confusion.loc[r, c]
    }
    assert off_diagonal == {("high", "low"): 2}


def test_versions_are_selected_by_rubric_not_by_name(tmp_path: Path) -> None:
    """One ledger holding both versions can be passed twice; a name without rows refuses."""
    cat, v3 = build(tmp_path / "catalogues", copies=2)
    v1 = _as_v1(cat, v3)
    both = pd.concat([v1[v1["dimension"] == "self_harm"], v3], ignore_index=True)
    out = compare_versions(both, both, cat, "self_harm", names=("v1", "v3")).get("agreement")
    kappas = out.set_index("version")["kappa"]
    assert kappas["v3"] == 1.0 and kappas["v1"] < 0.6
    # The v3 kappa is the gate's, on the same pairs (gated strata, final turn, latest).
    gate = evaluate(v3, cat.labels, cat, n_resamples=50).dimensions["self_harm"]
    assert (gate.kappa, gate.n) == (kappas["v3"], out.set_index("version")["n"]["v3"])
    v3_hash = cat.rubric("self_harm", "v3").content_hash(cat.constants.bins)
    by_hash = compare_versions(both, both, cat, "self_harm", names=("v1", v3_hash))
    assert list(by_hash["agreement"]["version"]) == ["v1", "v3"]
    with pytest.raises(ValueError, match="no self_harm answer judged under rubric v1"):
        compare_versions(v3, v3, cat, "self_harm", names=("v1", "v3"))
    with pytest.raises(ValueError, match="neither a rubric version"):
        compare_versions(v3, v3, cat, "self_harm", names=("v9", "v3"))


def test_same_call_view_lines_up_dimensions(tmp_path: Path) -> None:
    cat, ledger = build(tmp_path / "catalogues", copies=1)
    ledger = ledger.copy()
    ledger["request_key"] = ledger["case_id"]  # one call scored every dimension
    view = same_call_view(ledger, cat)
    assert {"self_harm_judge", "escalation_judge", "self_harm_human", "same_call"} <= set(
        view.columns
    )
    assert len(view) == len(cat.cases) and view["same_call"].all()
    row = view.set_index("case_id").loc["en-US-0-2"]
    assert (row["self_harm_judge"], row["escalation_judge"]) == ("low", "high")
    assert isinstance(view, pd.DataFrame)
