"""Benchmark: encoding the inputs of the agreement statistics, against statsmodels.

Run:  python benchmarks/bench_agreement_inputs.py [--cases N]

Prints, in one run:
  1. evalkit's cohens_kappa on N = 100,000 label pairs (numpy string arrays, pandas
     Series, and Python lists with 1% missing), against statsmodels' cohens_kappa on the
     same table (statsmodels takes a table, so its time includes building that table with
     pandas: Categorical codes + bincount); the ratio evalkit / statsmodels, target ≤ 2×;
  2. agreement_table on N cases × 3 dimensions (2,000 bootstrap resamples each), against
     its 1-second target;
  3. fleiss_kappa, krippendorff_alpha and multi_rater on N units × 3 raters (1% empty
     cells), for the record (no target).
It only prints: nothing fails on a slow machine.  Each figure is the best of 3 runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from _common import header, verdict
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from evalkit import agreement

CATS = ["low", "partial", "high"]
RATIO_TARGET = 2.0
TABLE_TARGET_S = 1.0


def best(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    out: Any = None
    fastest = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        fastest = min(fastest, time.perf_counter() - t0)
    return fastest, out


def synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Human labels skewed toward "low"; the judge copies them 75% of the time."""
    rng = np.random.default_rng(seed)
    human = rng.choice(CATS, size=n, p=[0.6, 0.25, 0.15])
    judge = human.copy()
    flip = rng.random(n) < 0.25
    judge[flip] = rng.choice(CATS, size=int(flip.sum()))
    return judge, human


def statsmodels_kappa(judge: Any, human: Any) -> float:
    """The table with pandas (codes + bincount), then statsmodels' cohens_kappa."""
    a = pd.Categorical(judge, categories=CATS).codes
    b = pd.Categorical(human, categories=CATS).codes
    keep = (a >= 0) & (b >= 0)
    q = len(CATS)
    table = np.bincount(a[keep] * q + b[keep], minlength=q * q).reshape(q, q)
    return float(sm_cohens_kappa(table).kappa)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    n = parser.parse_args().cases
    header("bench_agreement_inputs: encoding labels for the agreement statistics")
    judge, human = synthetic(n, seed=0)

    print(f"\n[1] cohens_kappa on {n:,} pairs")
    agreement.cohens_kappa(judge[:100], human[:100], CATS)  # warm-up
    t_ek, res = best(lambda: agreement.cohens_kappa(judge, human, CATS))
    t_sm, sm_value = best(lambda: statsmodels_kappa(judge, human))
    print(f"    evalkit (numpy arrays)      {t_ek * 1e3:8.1f} ms   kappa {res.value:.6f}")
    print(f"    statsmodels (same table)    {t_sm * 1e3:8.1f} ms   kappa {sm_value:.6f}")
    ratio = t_ek / t_sm
    print(f"    ratio evalkit / statsmodels {ratio:8.2f}×  (target ≤ {RATIO_TARGET:.0f}×) "
          f"{verdict(ratio <= RATIO_TARGET)}")  # fmt: skip
    sj, sh = pd.Series(judge), pd.Series(human)
    t_eks, res_s = best(lambda: agreement.cohens_kappa(sj, sh, CATS))
    print(f"    evalkit (pandas Series)     {t_eks * 1e3:8.1f} ms   kappa {res_s.value:.6f}")
    print(f"    ratio evalkit / statsmodels {t_eks / t_sm:8.2f}×")
    lj: list[Any] = judge.tolist()
    lh: list[Any] = human.tolist()
    for i in range(0, n, 100):
        lh[i] = None
    t_ekl, res_l = best(lambda: agreement.cohens_kappa(lj, lh, CATS))
    t_sml, sm_l = best(lambda: statsmodels_kappa(lj, lh))
    print(f"    evalkit (lists, 1% None)    {t_ekl * 1e3:8.1f} ms   kappa {res_l.value:.6f}")
    print(f"    statsmodels (same table)    {t_sml * 1e3:8.1f} ms   kappa {sm_l:.6f}")
    print(f"    ratio evalkit / statsmodels {t_ekl / t_sml:8.2f}×")

    print(f"\n[2] agreement_table: {n:,} cases × 3 dimensions, 2,000 resamples each")
    dims = ["self_harm", "escalation", "medical_accuracy"]
    parts = []
    for d, dim in enumerate(dims):
        j, h = synthetic(n, seed=10 + d)
        parts.append(pd.DataFrame({"dimension": dim, "judge": j, "human": h}))
    frame = pd.concat(parts, ignore_index=True)
    agreement.agreement_table(frame.iloc[:300], CATS, n_resamples=100)  # warm-up
    t_tab, table = best(lambda: agreement.agreement_table(frame, CATS, n_resamples=2000))
    print(f"    time {t_tab * 1e3:8.0f} ms  (target < {TABLE_TARGET_S:.0f} s) "
          f"{verdict(t_tab < TABLE_TARGET_S)}")  # fmt: skip
    cols = ["dimension", "n", "kappa", "ci_low", "ci_high", "ac1", "alpha", "status"]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))

    print(f"\n[3] {n:,} units × 3 raters, 1% empty cells (no target)")
    j2, _ = synthetic(n, seed=20)
    units = np.stack([judge, human, j2], axis=1).astype(object)
    units[::100, 1] = None
    t_f, fk = best(lambda: agreement.fleiss_kappa(units, CATS))
    print(f"    fleiss_kappa                {t_f * 1e3:8.1f} ms   kappa {fk.value:.6f}")
    t_a, ka = best(lambda: agreement.krippendorff_alpha(units.T, "nominal", CATS))
    print(f"    krippendorff_alpha          {t_a * 1e3:8.1f} ms   alpha {ka.value:.6f}")
    multi_rater = getattr(agreement, "multi_rater", None)
    if multi_rater is None:
        print("    multi_rater                 not in this version of evalkit")
    else:
        t_m, mr = best(lambda: multi_rater(units, CATS))
        print(f"    multi_rater (6 coefficients){t_m * 1e3:8.1f} ms   "
              f"fleiss {mr.loc['fleiss', 'value']:.6f}")  # fmt: skip


if __name__ == "__main__":
    main()
