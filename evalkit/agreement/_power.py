"""How many labels a study needs: analytic sample size and simulated gate power.

Joint table for a true kappa
----------------------------
Both functions build the population q × q table of (judge, human) proportions with given
marginals and true (unweighted) kappa κ:

* common marginals m (both raters alike):  ``P = (1 - κ) m mᵀ + κ diag(m)``.
  Its marginals are m and its kappa is exactly κ (p_e = Σ m_k², p_o = (1-κ)p_e + κ).
* different marginals r (judge) and c (human): ``P = (1 - λ) r cᵀ + λ P_max`` with
  ``λ = κ / κ_max``, where ``P_max = diag(d) + (r - d)(c - d)ᵀ / (1 - Σ d)``,
  ``d = min(r, c)``, is the table with these marginals and the largest diagonal.  Kappa is
  linear in λ (p_e does not change), so kappa(P) = κ.  κ above κ_max is unattainable.

A κ so negative that a cell would be negative raises ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.agreement._distributions import normal_quantile
from evalkit.agreement._inputs import FloatArray
from evalkit.agreement._kappa import kappa_parts, kappa_variance
from evalkit.agreement._results import GatePowerResult

RULES = ("lower_bound", "point")


def _probabilities(values: Any, name: str) -> FloatArray:
    p = np.asarray(values, dtype=np.float64)
    if p.ndim != 1 or p.size < 2:
        raise ValueError(f"{name} must be a sequence of at least 2 proportions")
    if np.any(~np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be non-negative finite proportions, got {p.tolist()}")
    if abs(float(p.sum()) - 1.0) > 1e-6:
        raise ValueError(f"{name} must sum to 1, got {float(p.sum())!r}")
    return p / p.sum()


def joint_table(kappa: float, judge: FloatArray, human: FloatArray | None = None) -> FloatArray:
    """Population table with the given marginals and true kappa (module docstring)."""
    r = judge
    c = judge if human is None else human
    if r.shape != c.shape:
        raise ValueError("judge and human marginals must have the same number of categories")
    if not -1.0 <= kappa <= 1.0:
        raise ValueError(f"kappa must be between -1 and 1, got {kappa!r}")
    d = np.minimum(r, c)
    rest = 1.0 - float(d.sum())
    p_max = np.diag(d)
    if rest > 1e-12:
        p_max = p_max + np.outer(r - d, c - d) / rest
    p_e = float(r @ c)
    k_max = (float(d.sum()) - p_e) / (1.0 - p_e) if 1.0 - p_e > 1e-12 else 0.0
    if k_max <= 1e-12:
        raise ValueError("these marginals allow no positive kappa (a rater is constant)")
    if kappa > k_max + 1e-12:
        raise ValueError(
            f"kappa {kappa} is unattainable with these marginals (kappa_max = {k_max:.4f})"
        )
    lam = kappa / k_max
    table = (1.0 - lam) * np.outer(r, c) + lam * p_max
    if float(table.min()) < -1e-12:
        raise ValueError(f"kappa {kappa} is below what these marginals allow")
    return np.clip(table, 0.0, None)


def _sample_size_marginals(prevalence: Any, categories: int) -> FloatArray:
    if isinstance(categories, bool) or int(categories) != categories or categories < 2:
        raise ValueError(f"categories must be an integer >= 2, got {categories!r}")
    q = int(categories)
    if prevalence is None:
        return np.full(q, 1.0 / q)
    if isinstance(prevalence, int | float) and not isinstance(prevalence, bool):
        p = float(prevalence)
        if not 0.0 < p < 1.0:
            raise ValueError(f"prevalence must be strictly between 0 and 1, got {prevalence!r}")
        return np.array([(1.0 - p) / (q - 1)] * (q - 1) + [p])
    m = _probabilities(prevalence, "prevalence")
    if m.size != q:
        raise ValueError(f"prevalence lists {m.size} proportions but categories = {q}")
    return m


def sample_size(
    kappa: float,
    half_width: float,
    prevalence: float | Sequence[float] | None = None,
    categories: int = 3,
    level: float = 0.95,
) -> int:
    """Pairs needed for a ``level`` Wald interval of Cohen's kappa of ±``half_width``.

    ``n = ceil(z² · V / half_width²)``, ``z`` the normal quantile for ``level`` and ``V`` the
    per-pair Fleiss–Cohen–Everitt (1969) large-sample variance of kappa, ``n · Var(kappa)``,
    evaluated at the population table with true ``kappa`` and common marginals built as in
    the module docstring.  For two categories with prevalence π this is the closed form
    ``V = (1-κ)[(1-κ)(1-2κ) + κ(2-κ)/(2π(1-π))]``.  Example: κ = 0.6 ± 0.1 at 95% needs 246
    pairs at π = 0.5, 392 at 0.2 and 705 at 0.1.

    ``prevalence``: None for uniform marginals over ``categories``; a number p for the
    proportion in the last category ("positive" when q = 2), the other q - 1 categories
    sharing 1 - p equally; or a full sequence of q marginal proportions.
    """
    if not -1.0 < float(kappa) < 1.0:
        raise ValueError(f"kappa must be strictly between -1 and 1, got {kappa!r}")
    if not float(half_width) > 0.0:
        raise ValueError(f"half_width must be positive, got {half_width!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    m = _sample_size_marginals(prevalence, categories)
    table = joint_table(float(kappa), m)
    per_pair = float(kappa_variance(table, np.eye(m.size)))
    z = normal_quantile(0.5 + float(level) / 2.0)
    return max(2, math.ceil(z * z * per_pair / float(half_width) ** 2 - 1e-9))


def _gate_marginals(marginals: Any) -> tuple[FloatArray, FloatArray]:
    arr = np.asarray(marginals, dtype=np.float64)
    if arr.ndim == 1:
        m = _probabilities(arr, "marginals")
        return m, m
    if arr.ndim == 2 and arr.shape[0] == 2:
        return _probabilities(arr[0], "judge marginals"), _probabilities(arr[1], "human marginals")
    raise ValueError("marginals must be one sequence of proportions or a (judge, human) pair")


def gate_power(
    true_kappa: float,
    n: int,
    threshold: float,
    marginals: Any,
    n_sim: int = 2000,
    seed: int = 0,
    rule: str = "lower_bound",
    level: float = 0.95,
) -> GatePowerResult:
    """Probability that a study of ``n`` pairs passes the kappa gate at ``threshold``.

    Draws ``n_sim`` tables of ``n`` pairs from the population table with the given
    ``marginals`` (one sequence for both raters, or a (judge, human) pair) and true kappa
    (module docstring), with ``numpy.random.default_rng(seed)``.  A study passes when
    ``rule == "lower_bound"``: the Wald lower limit ``kappa - z·se`` (FCE SE, two-sided
    ``level``) is at least ``threshold`` — the power of the one-sided test of
    kappa ≤ threshold; ``rule == "point"``: the estimate itself is at least ``threshold``.
    Both rates are reported; ``power`` is the one ``rule`` selects.  Simulated tables on
    which kappa is undefined or 0 by construction (a constant rater) count as failures and
    in ``n_degenerate``.  When true_kappa < threshold, ``power`` is a false-pass rate.
    """
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: use one of {list(RULES)}")
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if isinstance(n_sim, bool) or int(n_sim) != n_sim or n_sim < 1:
        raise ValueError(f"n_sim must be a positive integer, got {n_sim!r}")
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    r, c = _gate_marginals(marginals)
    table = joint_table(float(true_kappa), r, c)
    q = r.size
    p_e = float(r @ c)
    k_max = (float(np.minimum(r, c).sum()) - p_e) / (1.0 - p_e)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(n), table.ravel() / table.sum(), size=int(n_sim))
    tables: FloatArray = draws.reshape(int(n_sim), q, q).astype(np.float64)
    w = np.eye(q)
    kappa = kappa_parts(tables, w)[0]
    se = np.sqrt(kappa_variance(tables, w))
    rows_used = np.count_nonzero(tables.sum(axis=2), axis=1)
    cols_used = np.count_nonzero(tables.sum(axis=1), axis=1)
    degenerate = ~np.isfinite(kappa) | (rows_used < 2) | (cols_used < 2)
    z = normal_quantile(0.5 + float(level) / 2.0)
    good = ~degenerate
    point = good & (np.nan_to_num(kappa, nan=-np.inf) >= threshold)
    lower = good & (np.nan_to_num(kappa - z * se, nan=-np.inf) >= threshold)
    p_point = float(point.mean())
    p_lower = float(lower.mean())
    mean_kappa = float(kappa[good].mean()) if good.any() else None
    return GatePowerResult(
        power=p_lower if rule == "lower_bound" else p_point,
        rule=rule,
        p_pass_point=p_point,
        p_pass_lower_bound=p_lower,
        true_kappa=float(true_kappa),
        n=int(n),
        threshold=float(threshold),
        n_sim=int(n_sim),
        seed=int(seed),
        n_degenerate=int(degenerate.sum()),
        mean_kappa=mean_kappa,
        kappa_max=float(k_max),
        judge_marginals=tuple(float(x) for x in r),
        human_marginals=tuple(float(x) for x in c),
        joint=tuple(tuple(float(x) for x in row) for row in table),
    )
