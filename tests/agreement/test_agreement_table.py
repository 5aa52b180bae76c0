"""agreement_table(): one row per dimension."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.agreement import agreement_table, bootstrap_ci, cohens_kappa, diagnose

CATS = ["low", "partial", "high"]


def long_frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for dim in ["self_harm", "escalation"]:
        human = rng.choice(CATS, size=n, p=[0.6, 0.25, 0.15])
        judge = human.copy()
        flip = rng.random(n) < 0.25
        judge[flip] = rng.choice(CATS, size=int(flip.sum()))
        for i in range(n):
            rows.append({"dimension": dim, "judge": judge[i], "human": human[i], "family": i % 12})
    # a dimension where the judge always says "low": kappa 0 by construction
    for i in range(30):
        rows.append(
            {"dimension": "collapsed", "judge": "low", "human": CATS[i % 3], "family": i % 5}
        )
    return pd.DataFrame(rows)


def test_rows_columns_and_values() -> None:
    frame = long_frame()
    frame.loc[3, "judge"] = None
    tab = agreement_table(frame, CATS, n_resamples=500, seed=2)
    assert list(tab["dimension"]) == ["self_harm", "escalation", "collapsed"]
    assert list(tab.columns[:4]) == ["dimension", "n", "n_missing", "p_observed"]
    first = tab.iloc[0]
    sub = frame[frame["dimension"] == "self_harm"]
    k = cohens_kappa(sub["judge"], sub["human"], CATS)
    assert first["n"] == 119 and first["n_missing"] == 1
    assert first["kappa"] == pytest.approx(k.value)
    assert first["se"] == pytest.approx(k.se)
    assert (first["boot_low"], first["boot_high"]) == pytest.approx(
        bootstrap_ci(sub["judge"], sub["human"], CATS, n_resamples=500, seed=2)
    )
    assert first["kappa_max"] == pytest.approx(diagnose(sub["judge"], sub["human"], CATS).kappa_max)
    assert first["status"] == "ok"


def test_degenerate_dimension_shows_na_and_flags() -> None:
    tab = agreement_table(long_frame(), CATS, n_resamples=200)
    row = tab[tab["dimension"] == "collapsed"].iloc[0]
    assert row["status"] == "single_rater_constant"
    assert row["kappa"] == 0.0
    assert row["se"] is pd.NA and row["boot_low"] is pd.NA
    assert "single_class_collapse" in row["flags"] and "all_low" in row["flags"]
    assert tab["kappa"].dtype == "Float64" and tab["n"].dtype == "Int64"
    for col in ("kappa", "se", "boot_low"):
        assert not any(isinstance(v, float) and np.isnan(v) for v in tab[col].tolist())


def test_clusters_and_per_dimension_categories() -> None:
    frame = long_frame()
    tab = agreement_table(frame, CATS, cluster_col="family", n_resamples=300)
    assert tab["boot_used"].iloc[0] == 300
    cats = {"self_harm": CATS, "escalation": CATS, "collapsed": ["low", "partial", "high"]}
    assert agreement_table(frame, cats, n_resamples=100).shape[0] == 3


def test_errors_name_the_problem() -> None:
    frame = long_frame()
    with pytest.raises(ValueError, match="no column 'verdict'"):
        agreement_table(frame, CATS, judge_col="verdict")
    bad = frame.copy()
    bad.loc[5, "human"] = "unsure"
    with pytest.raises(ValueError, match=r"dimension 'self_harm': b\[5\] = 'unsure'"):
        agreement_table(bad, CATS, n_resamples=10)
    no_dim = frame.copy()
    no_dim.loc[0, "dimension"] = None
    with pytest.raises(ValueError, match="'dimension' has 1 missing"):
        agreement_table(no_dim, CATS, n_resamples=10)
    with pytest.raises(ValueError, match="no entry for dimension"):
        agreement_table(frame, {"self_harm": CATS}, n_resamples=10)


def test_empty_frame() -> None:
    empty = pd.DataFrame({"dimension": [], "judge": [], "human": []})
    tab = agreement_table(empty, CATS)
    assert tab.shape[0] == 0 and "kappa" in tab.columns
