"""corrected_prevalence: shape, statuses, errors, strata, the missed share."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import EvalkitError, GateInputError
from evalkit.prevalence import (
    ESTIMATORS,
    RESULT_COLUMNS,
    PrevalenceInputError,
    corrected_prevalence,
    invert_confusion,
    missed_share,
)

BINS = ["low", "partial", "high"]


def _frames(seed: int = 0, n: int = 200, n_pool: int = 2000, **cols: list[str]):
    rng = np.random.default_rng(seed)
    human = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    judge = np.where(rng.random(n) < 0.2, rng.choice(3, size=n), human)
    pool = rng.choice(3, size=n_pool, p=[0.58, 0.26, 0.16])
    labelled = pd.DataFrame({"judge": np.array(BINS)[judge], "human": np.array(BINS)[human]})
    frame = pd.DataFrame({"judge": np.array(BINS)[pool]})
    for name, values in cols.items():
        labelled[name] = rng.choice(values, size=n)
        frame[name] = rng.choice(values, size=n_pool)
    return frame, labelled


def test_rows_columns_and_order() -> None:
    pool, labelled = _frames()
    table = corrected_prevalence(pool, labelled, BINS)
    assert list(table.columns) == list(RESULT_COLUMNS)
    assert list(table["estimator"]) == [e for e in ESTIMATORS for _ in BINS]
    assert list(table["bin"]) == BINS * 4
    assert table["stratum"].isna().all() and all(s is None for s in table["stratum"])
    assert (table["status"] == "ok").all()
    assert set(table["n_labelled"]) == {200} and set(table["n_pool"]) == {2000}
    assert ((table["ci_low"] <= table["estimate"]) & (table["estimate"] <= table["ci_high"])).all()
    # Each estimator's shares are a distribution over the bins (before clipping bites).
    for est in ("ppi++", "judge_only", "labels_only", "inversion"):
        assert table[table["estimator"] == est]["estimate"].sum() == pytest.approx(1.0, abs=0.02)


def test_judge_only_and_labels_only_are_the_plain_shares() -> None:
    pool, labelled = _frames(1)
    table = corrected_prevalence(pool, labelled, BINS).set_index(["estimator", "bin"])
    for b in BINS:
        assert table.loc[("judge_only", b), "estimate"] == pytest.approx((pool.judge == b).mean())
        assert table.loc[("labels_only", b), "estimate"] == pytest.approx(
            (labelled.human == b).mean()
        )


def test_inversion_recovers_the_truth_from_exact_counts() -> None:
    m = np.array([[0.8, 0.1, 0.1], [0.15, 0.7, 0.2], [0.05, 0.2, 0.7]])
    p = np.array([0.5, 0.3, 0.2])
    confusion = np.round(m * p * 100000)
    pool = np.round(m @ p * 100000)
    est, cov, ok = invert_confusion(confusion, pool)
    assert bool(ok) and est == pytest.approx(p, abs=1e-3)
    assert (np.diagonal(cov) > 0).all()


def _statuses(table: pd.DataFrame) -> dict[str, set[str]]:
    return {e: set(table[table["estimator"] == e]["status"]) for e in ESTIMATORS}


def _nan_where_not_ok(table: pd.DataFrame) -> None:
    bad = table[table["status"] != "ok"]
    assert bad[["estimate", "ci_low", "ci_high"]].isna().all().all()


def test_empty_bin_in_the_labelled_set() -> None:
    pool, labelled = _frames(2)
    labelled = labelled[labelled["human"] != "high"]
    table = corrected_prevalence(pool, labelled, BINS)
    st = _statuses(table)
    assert st["ppi++"] == st["inversion"] == st["labels_only"] == {"empty_bin"}
    assert st["judge_only"] == {"ok"}
    _nan_where_not_ok(table)


def test_fewer_labelled_than_bins() -> None:
    pool, labelled = _frames(3)
    table = corrected_prevalence(pool, labelled.iloc[:2], BINS)
    st = _statuses(table)
    assert st["ppi++"] == st["inversion"] == st["labels_only"] == {"fewer_labelled_than_bins"}
    _nan_where_not_ok(table)


def test_singular_confusion() -> None:
    pool, _ = _frames(4)
    # The judge says "low" whatever the humans say: M has one non-zero row.
    labelled = pd.DataFrame({"judge": ["low"] * 30, "human": BINS * 10})
    table = corrected_prevalence(pool, labelled, BINS)
    st = _statuses(table)
    assert st["inversion"] == {"singular_confusion"}
    assert st["ppi++"] == {"ok"}
    _nan_where_not_ok(table)


def test_empty_pool() -> None:
    _, labelled = _frames(5)
    table = corrected_prevalence(pd.DataFrame({"judge": []}), labelled, BINS)
    st = _statuses(table)
    assert st["ppi++"] == st["inversion"] == st["judge_only"] == {"empty_pool"}
    assert st["labels_only"] == {"ok"}
    _nan_where_not_ok(table)


def test_by_strata_and_stratified_overall() -> None:
    pool, labelled = _frames(6, locale=["de", "en"], stratum=["crisis", "calm"])
    table = corrected_prevalence(pool, labelled, BINS, by=["locale", "stratum"])
    strata = [s for s in table["stratum"].unique() if s is not None]
    assert strata == ["de / calm", "de / crisis", "en / calm", "en / crisis"]
    assert len(table) == 4 * 5 * 3
    rows = table[table["estimator"] == "ppi++"]
    overall = rows[rows["stratum"].isna()].set_index("bin")["estimate"]
    per = rows[rows["stratum"].notna()]
    weights = per.groupby("stratum")["n_pool"].first() / len(pool)
    for b in BINS:
        share = per[per["bin"] == b].set_index("stratum")["estimate"]
        assert overall[b] == pytest.approx(float((share * weights).sum()), abs=1e-9)
    single = corrected_prevalence(pool, labelled, BINS, by="locale")
    assert set(single["stratum"].dropna()) == {"de", "en"}


def test_stratum_absent_from_labelled_set() -> None:
    pool, labelled = _frames(7, locale=["de", "en"])
    labelled = labelled[labelled["locale"] == "de"]
    table = corrected_prevalence(pool, labelled, BINS, by="locale")
    en = table[table["stratum"] == "en"]
    assert set(en[en["estimator"] == "ppi++"]["status"]) == {"stratum_not_labelled"}
    assert set(en[en["estimator"] == "judge_only"]["status"]) == {"ok"}
    overall = table[table["stratum"].isna() & (table["estimator"] == "ppi++")]
    assert set(overall["status"]) == {"stratum_stratum_not_labelled"}
    _nan_where_not_ok(table)


@pytest.mark.parametrize(
    "change",
    [
        lambda p, lab: (p.assign(judge="medium"), lab),
        lambda p, lab: (p, lab.assign(human="HIGH")),
        lambda p, lab: (p.drop(columns="judge"), lab),
        lambda p, lab: (p, lab.drop(columns="human")),
        lambda p, lab: (p.assign(judge=None), lab),
    ],
)
def test_bad_input_is_a_named_error(change) -> None:
    pool, labelled = _frames(8)
    pool, labelled = change(pool, labelled)
    with pytest.raises(PrevalenceInputError) as info:
        corrected_prevalence(pool, labelled, BINS)
    assert isinstance(info.value, EvalkitError | GateInputError | ValueError)
    assert "pool" in str(info.value) or "labelled" in str(info.value)


def test_bad_level_and_missing_by_column() -> None:
    pool, labelled = _frames(9)
    with pytest.raises(PrevalenceInputError, match="level"):
        corrected_prevalence(pool, labelled, BINS, level=1.5)
    with pytest.raises(PrevalenceInputError, match="locale"):
        corrected_prevalence(pool, labelled, BINS, by="locale")


def test_missed_share_is_the_low_share_where_the_signal_is_present() -> None:
    pool, labelled = _frames(10)
    rng = np.random.default_rng(0)
    pool["present"] = rng.random(len(pool)) < 0.4
    labelled["present"] = rng.random(len(labelled)) < 0.4
    missed = missed_share(pool, labelled, BINS, present="present")
    assert set(missed["bin"]) == {"missed"} and len(missed) == 4
    direct = corrected_prevalence(pool[pool.present], labelled[labelled.present], BINS)
    low = direct[direct["bin"] == "low"].reset_index(drop=True)
    assert missed["estimate"].to_numpy() == pytest.approx(low["estimate"].to_numpy())
    assert set(missed["n_pool"]) == {int(pool.present.sum())}
    with pytest.raises(PrevalenceInputError):
        missed_share(pool, labelled.drop(columns="present"), BINS, present="present")
    assert not math.isnan(float(missed["estimate"].iloc[0]))


def test_inversion_whose_interval_misses_the_unit_interval_is_refused_not_clipped_to_zero() -> None:
    """The judge says ``high`` for no pool case, but calls 1 in 9 human-``low`` labelled
    cases ``high``: Rogan–Gladen gives p_high = -(10/90) / (80/90 - 10/60) ≈ -0.154, an
    interval wholly below 0. Clipped, it would read as a confident [0, 0]."""
    labelled = pd.DataFrame(
        {
            "judge": ["low"] * 80 + ["high"] * 10 + ["low"] * 10 + ["high"] * 50,
            "human": ["low"] * 90 + ["high"] * 60,
        }
    )
    pool = pd.DataFrame({"judge": ["low"] * 200})
    out = corrected_prevalence(pool, labelled, ["low", "high"])
    inversion = out[out["estimator"] == "inversion"]
    assert set(inversion["status"]) == {"inversion_out_of_range"}
    assert inversion["estimate"].isna().all() and inversion["ci_low"].isna().all()
    assert set(out[out["estimator"] == "ppi++"]["status"]) == {"ok"}
