"""Percentile bootstrap: reproducibility, equivalence with explicit pair resampling,
clusters, degenerate resamples, and argument checking."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.agreement import bootstrap_ci, bootstrap_interval, cohens_kappa
from evalkit.agreement._kappa import kappa_parts

CATS = ["low", "partial", "high"]


def sample_pairs(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    human = rng.choice(CATS, size=n, p=[0.6, 0.25, 0.15])
    judge = human.copy()
    flip = rng.random(n) < 0.3
    judge[flip] = rng.choice(CATS, size=int(flip.sum()))
    return list(judge), list(human)


def test_same_seed_same_interval_and_wrapper_agrees() -> None:
    a, b = sample_pairs(300, 1)
    r1 = bootstrap_interval(a, b, CATS, n_resamples=2000, seed=5)
    r2 = bootstrap_interval(a, b, CATS, n_resamples=2000, seed=5)
    assert r1 == r2
    assert bootstrap_ci(a, b, CATS, n_resamples=2000, seed=5) == (r1.low, r1.high)
    r3 = bootstrap_interval(a, b, CATS, n_resamples=2000, seed=6)
    assert (r3.low, r3.high) != (r1.low, r1.high)
    assert r1.low < r1.estimate < r1.high
    assert r1.estimate == pytest.approx(cohens_kappa(a, b, CATS).value)
    assert r1.n_resamples_used == 2000 and r1.n_degenerate == 0


def test_multinomial_tables_match_explicit_pair_resampling() -> None:
    # The fast path draws resample tables from Multinomial(n, p̂); resampling pair indices
    # with replacement and cross-tabulating has the same distribution.
    a, b = sample_pairs(300, 2)
    fast = bootstrap_interval(a, b, CATS, n_resamples=4000, seed=0)
    codes = {c: i for i, c in enumerate(CATS)}
    cell = np.array([codes[x] * 3 + codes[y] for x, y in zip(a, b, strict=True)])
    rng = np.random.default_rng(123)
    idx = rng.integers(0, len(cell), size=(4000, len(cell)))
    tables = np.stack([np.bincount(cell[row], minlength=9) for row in idx]).reshape(-1, 3, 3)
    slow = np.quantile(kappa_parts(tables.astype(float), np.eye(3))[0], [0.025, 0.975])
    assert fast.low == pytest.approx(slow[0], abs=0.015)
    assert fast.high == pytest.approx(slow[1], abs=0.015)


def test_cluster_bootstrap_is_wider_for_correlated_clusters() -> None:
    rng = np.random.default_rng(4)
    a: list[str] = []
    b: list[str] = []
    fam: list[int] = []
    for g in range(30):  # 30 template families of 10 identical cases each
        x = str(rng.choice(CATS))
        y = x if rng.random() < 0.7 else str(rng.choice(CATS))
        a += [x] * 10
        b += [y] * 10
        fam += [g] * 10
    pairs = bootstrap_interval(a, b, CATS, n_resamples=3000, seed=0)
    clustered = bootstrap_interval(a, b, CATS, n_resamples=3000, seed=0, clusters=fam)
    assert clustered.n_clusters == 30
    assert (clustered.high - clustered.low) > 1.5 * (pairs.high - pairs.low)


def test_singleton_clusters_behave_like_pairs() -> None:
    a, b = sample_pairs(200, 3)
    pairs = bootstrap_interval(a, b, CATS, n_resamples=4000, seed=0)
    single = bootstrap_interval(a, b, CATS, n_resamples=4000, seed=0, clusters=range(200))
    assert single.low == pytest.approx(pairs.low, abs=0.02)
    assert single.high == pytest.approx(pairs.high, abs=0.02)


def test_degenerate_resamples_are_dropped_and_counted() -> None:
    a = ["low", "low", "low", "high"]
    b = ["low", "low", "low", "high"]
    r = bootstrap_interval(a, b, CATS, n_resamples=1000, seed=0)
    assert r.n_degenerate > 0  # resamples of only "low" pairs: kappa is 0/0
    assert r.n_resamples_used + r.n_degenerate == 1000
    assert r.low is not None and r.high == 1.0
    assert any("degenerate" in note for note in r.notes)


def test_no_interval_when_point_estimate_is_not_meaningful() -> None:
    a = ["low"] * 20
    b = ["low"] * 15 + ["high"] * 5
    r = bootstrap_interval(a, b, CATS)
    assert r.status == "single_rater_constant" and (r.low, r.high) == (None, None)
    assert bootstrap_ci(a, b, CATS) == (None, None)
    # AC1 is defined here, so it does get an interval.
    ac1 = bootstrap_interval(a, b, CATS, statistic="gwet_ac1", n_resamples=500)
    assert ac1.status == "ok" and ac1.low is not None
    assert bootstrap_ci([], [], CATS) == (None, None)


@pytest.mark.parametrize("statistic", ["gwet_ac1", "brennan_prediger", "percent_agreement"])
@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_other_statistics(statistic: str, weights: str | None) -> None:
    a, b = sample_pairs(250, 9)
    r = bootstrap_interval(
        a, b, CATS, statistic=statistic, weights=weights, n_resamples=2000, seed=1, level=0.9
    )
    assert r.low is not None and r.high is not None
    assert -1.0 <= r.low <= r.estimate <= r.high <= 1.0
    assert r.level == 0.9 and r.weights == weights


def test_missing_pairs_and_clusters_are_aligned() -> None:
    a = ["low", None, "high", "low", "partial", "high", "low", "high"]
    b = ["low", "high", "high", None, "partial", "low", "low", "high"]
    fam = [1, 1, 2, 2, 3, 3, 4, 4]
    r = bootstrap_interval(a, b, CATS, n_resamples=500, clusters=fam)
    assert r.n == 6 and r.n_missing == 2 and r.n_clusters == 4


def test_bad_arguments() -> None:
    a, b = sample_pairs(20, 0)
    with pytest.raises(ValueError, match="unknown statistic"):
        bootstrap_ci(a, b, CATS, statistic="scotts_pi")
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(a, b, CATS, level=95)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(a, b, CATS, n_resamples=0)
    with pytest.raises(ValueError, match="one label per pair"):
        bootstrap_ci(a, b, CATS, clusters=[1, 2])
    with pytest.raises(ValueError, match=r"clusters\[0\] is missing"):
        bootstrap_ci(a, b, CATS, clusters=[None] + [1] * 19)
    with pytest.raises(ValueError, match="unknown weights"):
        bootstrap_ci(a, b, CATS, weights="cubic")
    single_cluster = bootstrap_interval(a, b, CATS, clusters=[1] * 20)
    assert single_cluster.status == "too_few_pairs" and single_cluster.low is None
