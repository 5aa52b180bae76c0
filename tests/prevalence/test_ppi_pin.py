"""PPI++ pinned against ppi_py 0.2.3 (Angelopoulos, Duchi & Zrnic) on fixed inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

ppi_py = pytest.importorskip("ppi_py")

from evalkit.prevalence import corrected_prevalence, ppi_bins, ppi_lambda, ppi_mean  # noqa: E402
from evalkit.prevalence._naive import effective_wilson, z_value  # noqa: E402

BINS = ["low", "partial", "high"]


def _sample(seed: int, n: int = 150, n_pool: int = 1200):
    rng = np.random.default_rng(seed)
    human = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    noise = rng.random(n) < 0.3
    judge = np.where(noise, rng.choice(3, size=n), human)
    pool = rng.choice(3, size=n_pool, p=[0.55, 0.28, 0.17])
    return human, judge, pool


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("b", [0, 1, 2])
def test_point_lambda_and_wald_interval_match_ppi_py(seed: int, b: int) -> None:
    human, judge, pool = _sample(seed)
    y, f, fp = (human == b).astype(float), (judge == b).astype(float), (pool == b).astype(float)
    est, se, lam = ppi_mean(y.sum(), f.sum(), (y * f).sum(), len(y), fp.sum(), len(fp))
    ref = float(ppi_py.ppi_mean_pointestimate(y, f, fp)[0])
    assert float(est) == pytest.approx(ref, abs=1e-12)
    lo, hi = ppi_py.ppi_mean_ci(y, f, fp, alpha=0.05)
    z = z_value(0.95)
    assert float(est - z * se) == pytest.approx(float(np.ravel(lo)[0]), abs=1e-10)
    assert float(est + z * se) == pytest.approx(float(np.ravel(hi)[0]), abs=1e-10)
    # λ̂ against ppi_py's estimator of it: lam=λ̂ reproduces its power-tuned estimate.
    fixed = float(ppi_py.ppi_mean_pointestimate(y, f, fp, lam=float(lam))[0])
    assert fixed == pytest.approx(ref, abs=1e-12)
    assert 0.0 <= float(lam) <= 1.0


def test_lambda_edges_plain_ppi_and_constant_judge() -> None:
    human, judge, pool = _sample(3)
    y, f, fp = (human == 0).astype(float), (judge == 0).astype(float), (pool == 0).astype(float)
    est1, se1, _ = ppi_mean(y.sum(), f.sum(), (y * f).sum(), len(y), fp.sum(), len(fp), lam=1.0)
    assert float(est1) == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, fp, lam=1)[0]))
    lo, _ = ppi_py.ppi_mean_ci(y, f, fp, alpha=0.05, lam=1)
    assert float(est1 - z_value(0.95) * se1) == pytest.approx(float(np.ravel(lo)[0]))
    # A judge constant over both sets: ppi_py divides by zero, we take λ̂ = 0.
    assert float(ppi_lambda(10, 0, 0, 100, 0, 1000)) == 0.0


def test_frame_ppi_is_the_count_ppi_with_the_effective_wilson_interval() -> None:
    human, judge, pool = _sample(4)
    labelled = pd.DataFrame({"judge": np.array(BINS)[judge], "human": np.array(BINS)[human]})
    frame = pd.DataFrame({"judge": np.array(BINS)[pool]})
    table = corrected_prevalence(frame, labelled, BINS)
    rows = table[table["estimator"] == "ppi++"].set_index("bin")
    confusion = np.zeros((3, 3))
    np.add.at(confusion, (judge, human), 1)
    est, se = ppi_bins(confusion, np.bincount(pool, minlength=3))
    low, high = effective_wilson(est, se, z_value(0.95), len(human))
    for i, b in enumerate(BINS):
        y = (human == i).astype(float)
        ref = float(ppi_py.ppi_mean_pointestimate(y, (judge == i) * 1.0, (pool == i) * 1.0)[0])
        assert rows.loc[b, "estimate"] == pytest.approx(ref, abs=1e-12)
        assert (rows.loc[b, "ci_low"], rows.loc[b, "ci_high"]) == pytest.approx((low[i], high[i]))
        # Same width as ppi_py's Wald interval to within a few percent, shifted inward.
        wald = 2 * z_value(0.95) * se[i]
        assert rows.loc[b, "ci_high"] - rows.loc[b, "ci_low"] == pytest.approx(wald, rel=0.05)
