"""The corrected share from a planned sample: inverse-probability-weighted difference.

When the labelled cases are drawn from the pool itself with known inclusion
probabilities ``π_i`` (Poisson sampling, :func:`evalkit.prevalence.plan_labels`), the
share of bin ``b`` among the pool's ``N`` replies is estimated by the difference
estimator with Horvitz–Thompson weights (PPI with λ = 1, weighted):

    θ̂_b = mean_pool(f_b) + (1/N) Σ_{i∈S} (Y_ib − f_ib) / π_i,

with ``f_ib = 1[judge_i = b]``, ``Y_ib = 1[human_i = b]``. It is unbiased for the pool's
human share over the sampling design whatever the judge's errors, and its variance under
Poisson sampling, ``(1/N²) Σ_{i∈U} (1 − π_i)/π_i · d_ib²`` with ``d = Y − f``, is
estimated without bias by

    v̂_b = (1/N²) Σ_{i∈S} (1 − π_i) / π_i² · d_ib².

The target is the pool's own share (a finite population), so the pool adds no sampling
noise of its own; the interval is the Wilson interval at the effective sample size
``θ̂(1 − θ̂)/v̂`` (:func:`evalkit.prevalence._naive.effective_wilson`), as for PPI++. λ is not
power-tuned here: with the residuals weighted by 1/π the plain difference is the
estimator whose design variance the plan minimises.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.prevalence._frames import (
    EMPTY_POOL,
    OK,
    RESULT_COLUMNS,
    PrevalenceInputError,
    check_bins,
    check_frame,
    confusion_counts,
    judge_counts,
    labelled_status,
)
from evalkit.prevalence._naive import effective_wilson, z_value

#: The column of a planned labelled set that holds each case's inclusion probability.
INCLUSION = "inclusion_probability"
#: The estimator name of :func:`planned_prevalence`'s rows.
IPW_DIFFERENCE = "ipw_difference"


def weighted_difference(
    pool_share: np.ndarray,
    residuals: np.ndarray,
    pi: np.ndarray,
    selected: np.ndarray,
    n_pool: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Estimate and standard error of every bin, for one sample or a batch of samples.

    ``pool_share[K]`` is the judge's share of each bin on the pool; ``residuals[M, K]``
    holds ``Y − f`` of ``M`` cases (read only where selected); ``pi[M]`` their
    inclusion probabilities; ``selected[..., M]`` which of them are in the sample (one
    row per sample when batched). Returns arrays of shape ``selected.shape[:-1] + (K,)``.
    """
    pi = np.asarray(pi, dtype=float)
    d = np.nan_to_num(np.asarray(residuals, dtype=float))
    take = np.asarray(selected, dtype=float)
    estimate = pool_share + (take / pi) @ d / n_pool
    var = (take * (1 - pi) / pi**2) @ (d**2) / n_pool**2
    return estimate, np.sqrt(var)


def planned_prevalence(
    pool: pd.DataFrame,
    labelled: pd.DataFrame,
    bins: Sequence[str],
    *,
    level: float = 0.95,
) -> pd.DataFrame:
    """The pool's share of each bin from a sample drawn with :func:`plan_labels`.

    ``pool`` is the whole pool the plan was drawn from (``judge``); ``labelled`` the
    labelled cases of the sample, with ``judge``, ``human`` and ``inclusion_probability``
    (each in (0, 1]). Returns :data:`RESULT_COLUMNS` rows, estimator ``ipw_difference``,
    stratum None. Status ``empty_pool``, ``fewer_labelled_than_bins`` or ``empty_bin``
    as for :func:`evalkit.prevalence.corrected_prevalence`, with NaN numbers.
    """
    bins = check_bins(bins)
    check_frame(pool, "pool", ["judge"], bins)
    check_frame(labelled, "labelled", ["judge", "human", INCLUSION], bins)
    try:
        z = z_value(level)
    except ValueError as exc:
        raise PrevalenceInputError(f"level: {exc}") from None
    pi = pd.to_numeric(labelled[INCLUSION], errors="coerce").to_numpy(dtype=float)
    if not ((pi > 0) & (pi <= 1)).all():
        raise PrevalenceInputError(f"labelled {INCLUSION}: every value must lie in (0, 1]")
    k, n_pool = len(bins), len(pool)
    status = EMPTY_POOL if n_pool == 0 else labelled_status(confusion_counts(labelled, bins))
    estimate = low = high = np.full(k, np.nan)
    if status == OK:
        eye = np.eye(k)
        index = {b: i for i, b in enumerate(bins)}
        y = eye[labelled["human"].map(index).to_numpy(dtype=int)]
        f = eye[labelled["judge"].map(index).to_numpy(dtype=int)]
        share = judge_counts(pool, bins) / n_pool
        raw, se = weighted_difference(share, y - f, pi, np.ones(len(pi), bool), n_pool)
        estimate = np.clip(raw, 0, 1)
        low, high = effective_wilson(raw, se, z, len(labelled))
    rows = [
        (IPW_DIFFERENCE, None, b, estimate[i], low[i], high[i], len(labelled), n_pool, status)
        for i, b in enumerate(bins)
    ]
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
