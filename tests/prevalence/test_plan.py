"""plan_labels, planned_prevalence and expected_widths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.prevalence import (
    PrevalenceInputError,
    expected_widths,
    inclusion_probabilities,
    plan_labels,
    planned_prevalence,
)

BINS = ["low", "partial", "high"]


def _calibration() -> pd.DataFrame:
    # The judge is always right when it says low, right half the time otherwise.
    rows = [("low", "low")] * 100 + [("partial", "partial"), ("partial", "low")] * 20
    rows += [("high", "high"), ("high", "partial")] * 10
    return pd.DataFrame(rows, columns=["judge", "human"])


def _pool(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"judge": rng.choice(BINS, size=n, p=[0.7, 0.2, 0.1])})


def test_probabilities_sum_to_the_budget_and_favour_unreliable_bins() -> None:
    planned = plan_labels(_pool(), _calibration(), 100, bins=BINS, seed=1)
    pi = planned["inclusion_probability"]
    assert pi.sum() == pytest.approx(100, rel=1e-6)
    assert (pi > 0).all() and (pi <= 1).all()
    by_bin = planned.groupby("judge")["inclusion_probability"].first()
    assert by_bin["low"] < by_bin["partial"] and by_bin["low"] < by_bin["high"]
    # The floor: no case below a fifth of the uniform rate.
    assert pi.min() >= 0.2 * 100 / 1000 - 1e-12
    again = plan_labels(_pool(), _calibration(), 100, bins=BINS, seed=1)
    assert planned["selected"].equals(again["selected"])
    assert 60 < planned["selected"].sum() < 140


def test_inclusion_probabilities_cap_and_full_budget() -> None:
    pi = inclusion_probabilities(np.array([1.0, 1.0, 100.0, 100.0]), 3)
    assert pi.sum() == pytest.approx(3) and pi.max() == pytest.approx(1.0)
    assert (inclusion_probabilities(np.ones(5), 9) == 1).all()


def test_confusion_counts_are_accepted_as_calibration() -> None:
    counts = pd.crosstab(_calibration()["judge"], _calibration()["human"])
    a = plan_labels(_pool(), counts, 100, bins=BINS, seed=2)["inclusion_probability"]
    b = plan_labels(_pool(), _calibration(), 100, bins=BINS, seed=2)["inclusion_probability"]
    assert a.to_numpy() == pytest.approx(b.to_numpy())
    with pytest.raises(PrevalenceInputError):
        plan_labels(_pool(), counts.rename(columns={"high": "HIGH"}), 100, bins=BINS)
    with pytest.raises(PrevalenceInputError):
        plan_labels(_pool(), _calibration(), 0, bins=BINS)


def test_planned_prevalence_is_unbiased_with_the_weights() -> None:
    rng = np.random.default_rng(3)
    pool = _pool(2000, seed=3)
    truth = {"low": "low", "partial": "low", "high": "partial"}
    human = [truth[j] if rng.random() < 0.4 else j for j in pool["judge"]]
    pool = pool.assign(human=human)
    estimates = []
    for seed in range(40):
        planned = plan_labels(pool[["judge"]], _calibration(), 150, bins=BINS, seed=seed)
        sample = pool[planned["selected"]].assign(
            inclusion_probability=planned.loc[planned["selected"], "inclusion_probability"]
        )
        table = planned_prevalence(pool[["judge"]], sample, BINS)
        assert set(table["estimator"]) == {"ipw_difference"}
        estimates.append(table.set_index("bin")["estimate"])
    mean = pd.concat(estimates, axis=1).mean(axis=1)
    shares = pool["human"].value_counts(normalize=True)
    for b in BINS:
        assert mean[b] == pytest.approx(shares.get(b, 0.0), abs=0.02)


def test_planned_prevalence_statuses_and_errors() -> None:
    pool = _pool()
    sample = pd.DataFrame(
        {"judge": ["low", "low"], "human": ["low", "high"], "inclusion_probability": [0.1, 0.1]}
    )
    table = planned_prevalence(pool, sample, BINS)
    assert set(table["status"]) == {"fewer_labelled_than_bins"}
    assert table["estimate"].isna().all()
    with pytest.raises(PrevalenceInputError):
        planned_prevalence(pool, sample.assign(inclusion_probability=0.0), BINS)


def test_expected_widths_frame() -> None:
    widths = expected_widths(_pool(), _calibration(), BINS)
    assert list(widths.columns) == ["budget", "design", "bin", "expected_width"]
    assert sorted(widths["budget"].unique()) == [50, 100, 200]
    w = widths.set_index(["budget", "design", "bin"])["expected_width"]
    for b in BINS:
        assert w[(50, "planned", b)] > w[(100, "planned", b)] > w[(200, "planned", b)]
    total = widths.groupby(["budget", "design"])["expected_width"].sum()
    for budget in (50, 100, 200):
        assert total[(budget, "planned")] < total[(budget, "random")]
