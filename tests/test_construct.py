"""Construct tools: rubric version comparison and the same-call view."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalkit.construct import compare_versions, same_call_view
from tests.factory import build_balanced as build


def test_v1_against_v3_shows_the_construct_failure(tmp_path: Path) -> None:
    cat, v3 = build(tmp_path / "catalogues", copies=2)
    v1 = v3.copy()
    benign = v1["case_id"].isin(
        [c.id for c in cat.cases if c.stratum in ("benign", "medical_emergency")]
    )
    v1.loc[benign & (v1["dimension"] == "self_harm"), "bin"] = "high"
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
