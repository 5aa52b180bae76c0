"""The gate's statistics without scipy.stats: each function gives what the library it
replaces gives, to the last bit (issue 29: ``import scipy.stats`` cost more than the gate)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import SquareTable

from evalkit.agreement._distributions import (
    beta_quantile,
    bowker_test,
    chi2_cdf,
    chi2_sf,
    fisher_exact_greater,
    normal_quantile,
    normal_sf,
    stuart_maxwell_test,
    t_quantile,
    t_test_less,
)


def test_quantiles_are_scipy_stats_bit_for_bit() -> None:
    q = np.linspace(1e-9, 1 - 1e-9, 2001)
    assert [normal_quantile(p) for p in q] == list(stats.norm.ppf(q))
    for n in (1, 2, 7, 40, 192, 733, 5000):  # Clopper–Pearson bounds of the recall check
        for misses in sorted({0, 1, 2, n // 3, n - 1} & set(range(n))):  # misses < n
            want = stats.beta.ppf(0.95, misses + 1, n - misses)
            assert beta_quantile(0.95, misses + 1, n - misses) == want


def test_normal_tail_and_t_quantile_are_scipy_stats_bit_for_bit() -> None:
    for x in (*np.linspace(0, 40, 801), math.inf, -math.inf, -3.0):
        assert normal_sf(x) == stats.norm.sf(x)
    assert math.isnan(normal_sf(math.nan))
    for df in (1, 2, 5, 39, 40, 744):
        for q in (0.5, 0.9, 0.95, 0.975, 0.995):
            assert t_quantile(q, df) == stats.t.ppf(q, df)
    assert math.isnan(t_quantile(1.0, 3)) and math.isnan(t_quantile(0.9, 0))


def test_chi2_tails_are_scipy_stats_at_the_edges_too() -> None:
    for x in (-1.0, 0.0, 1e-300, 0.5, 3.0, 40.0, 1e4, math.inf):
        for df in (1, 2, 3, 6):
            assert chi2_sf(x, df) == stats.chi2.sf(x, df)
            assert chi2_cdf(x, df) == stats.chi2.cdf(x, df)
    assert math.isnan(chi2_sf(math.nan, 2)) and math.isnan(chi2_cdf(math.nan, 2))


def test_t_test_is_ttest_1samp_less_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    sizes = (2, 3, 30, 31, 200, 745)
    cases: list[Any] = [rng.integers(-1, 2, size=n) for n in sizes for _ in range(20)]
    cases += [rng.normal(size=50), np.zeros(40), np.ones(40), np.full(40, 0.2), [1, 2]]
    for values in cases:
        for epsilon in (0.0, 0.1, 0.2, 0.15):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = float(stats.ttest_1samp(values, epsilon, alternative="less").pvalue)
            got = t_test_less(values, epsilon)
            assert got == want or (math.isnan(got) and math.isnan(want)), (values, epsilon)
    assert math.isnan(t_test_less([1.0], 0.2))  # one value: no variance, no test


def test_fisher_exact_greater_matches_scipy() -> None:
    tables = [(a, b, c, d) for a in (0, 1, 5, 30) for b in (0, 2, 9) for c in (0, 3, 12)
              for d in (0, 4, 200)]  # fmt: skip
    for a, b, c, d in tables:
        want = float(stats.fisher_exact([[a, b], [c, d]], alternative="greater").pvalue)
        assert fisher_exact_greater(a, b, c, d) == pytest.approx(want, rel=1e-13, abs=1e-300)
    with pytest.raises(ValueError, match="non-negative"):
        fisher_exact_greater(-1, 0, 1, 1)


@pytest.mark.parametrize(
    "table",
    [
        [[10, 2, 0], [3, 20, 4], [1, 6, 30]],
        [[5, 0], [0, 7]],  # no off-diagonal count: a singular covariance
        [[0, 3], [4, 0]],
        [[12, 1, 1, 0], [2, 9, 0, 3], [0, 4, 8, 1], [1, 0, 2, 15]],
        [[3, 3, 3], [3, 3, 3], [3, 3, 3]],
    ],
)
def test_square_table_tests_are_statsmodels_bit_for_bit(table: list[list[int]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = SquareTable(np.asarray(table, dtype=np.float64), shift_zeros=False)
        hom, sym = st.homogeneity(), st.symmetry()
        got_h, got_s = stuart_maxwell_test(np.asarray(table)), bowker_test(np.asarray(table))
    for (stat, df, p), want in ((got_h, hom), (got_s, sym)):
        assert df == int(want.df)
        for mine, theirs in ((stat, float(want.statistic)), (p, float(want.pvalue))):
            assert mine == theirs or (math.isnan(mine) and math.isnan(theirs))
