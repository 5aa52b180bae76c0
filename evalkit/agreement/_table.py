"""``agreement_table``: one row of agreement statistics per dimension of a long frame."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalkit.agreement._bootstrap import bootstrap_interval
from evalkit.agreement._diagnose import diagnose

COLUMNS = (
    "dimension",
    "n",
    "n_missing",
    "p_observed",
    "p_expected",
    "kappa",
    "se",
    "ci_low",
    "ci_high",
    "boot_low",
    "boot_high",
    "boot_used",
    "kappa_max",
    "kappa_over_kappa_max",
    "ac1",
    "bp",
    "alpha",
    "status",
    "flags",
)
_FLOAT_COLUMNS = (
    "p_observed",
    "p_expected",
    "kappa",
    "se",
    "ci_low",
    "ci_high",
    "boot_low",
    "boot_high",
    "kappa_max",
    "kappa_over_kappa_max",
    "ac1",
    "bp",
    "alpha",
)
_INT_COLUMNS = ("n", "n_missing", "boot_used")


def agreement_table(
    frame: pd.DataFrame,
    categories: Any,
    *,
    dimension_col: str = "dimension",
    judge_col: str = "judge",
    human_col: str = "human",
    cluster_col: str | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    threshold: float = 0.60,
) -> pd.DataFrame:
    """Agreement statistics per dimension, one row each, in order of first appearance.

    ``frame`` is long: one row per (case, dimension) with the judge's and the human's
    label.  ``categories`` is the ordered category list shared by all dimensions, or a
    mapping dimension → category list.  Columns:

    ``n``, ``n_missing`` (pairs dropped jointly), ``p_observed``, ``p_expected``, ``kappa``
    with its FCE ``se`` and 95% Wald ``ci_low``/``ci_high``; ``boot_low``/``boot_high``, the
    95% percentile bootstrap interval of kappa (``n_resamples`` resamples, ``seed``; whole
    clusters resampled when ``cluster_col`` is given) and ``boot_used``, the resamples it
    rests on; ``kappa_max`` and ``kappa_over_kappa_max``; ``ac1`` (Gwet), ``bp``
    (Brennan–Prediger, PABAK for two categories), ``alpha`` (Krippendorff, nominal);
    ``status`` (kappa's status) and ``flags`` (the active :func:`diagnose` flags, joined with
    ", "; empty when none).

    Numeric columns use pandas nullable dtypes (``Float64``/``Int64``), so a number that
    does not exist shows as ``<NA>``, never NaN.  Every dimension is bootstrapped with the
    same ``seed``, so its interval does not depend on the other dimensions in the frame.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame)!r}")
    needed = [dimension_col, judge_col, human_col] + ([cluster_col] if cluster_col else [])
    for col in needed:
        if col not in frame.columns:
            raise ValueError(f"frame has no column {col!r} (columns: {list(frame.columns)})")
    n_na = int(frame[dimension_col].isna().sum())
    if n_na:
        raise ValueError(f"column {dimension_col!r} has {n_na} missing value(s)")
    records: list[dict[str, Any]] = []
    for dim in pd.unique(frame[dimension_col]):
        sub = frame[frame[dimension_col] == dim]
        if isinstance(categories, Mapping):
            if dim not in categories:
                raise ValueError(f"categories has no entry for dimension {dim!r}")
            cats = categories[dim]
        else:
            cats = categories
        judge = sub[judge_col].to_numpy(dtype=object)
        human = sub[human_col].to_numpy(dtype=object)
        try:
            d = diagnose(judge, human, cats, threshold=threshold)
            clusters = sub[cluster_col].to_numpy(dtype=object) if cluster_col else None
            boot = bootstrap_interval(
                judge,
                human,
                cats,
                statistic="cohens_kappa",
                n_resamples=n_resamples,
                seed=seed,
                clusters=clusters,
            )
        except ValueError as exc:
            raise ValueError(f"dimension {dim!r}: {exc}") from None
        k = d.kappa
        records.append(
            {
                "dimension": dim,
                "n": d.n,
                "n_missing": d.n_missing,
                "p_observed": d.p_observed,
                "p_expected": d.p_expected,
                "kappa": k.value,
                "se": k.se,
                "ci_low": k.ci_low,
                "ci_high": k.ci_high,
                "boot_low": boot.low,
                "boot_high": boot.high,
                "boot_used": boot.n_resamples_used,
                "kappa_max": d.kappa_max,
                "kappa_over_kappa_max": d.kappa_over_kappa_max,
                "ac1": d.gwet_ac1.value,
                "bp": d.brennan_prediger.value,
                "alpha": d.krippendorff_alpha.value,
                "status": d.status,
                "flags": ", ".join(d.active_flags),
            }
        )
    return pd.DataFrame({col: _column(col, [r[col] for r in records]) for col in COLUMNS})


def _column(col: str, values: list[Any]) -> Any:
    if col in _FLOAT_COLUMNS:
        return pd.array(values, dtype=pd.Float64Dtype())
    if col in _INT_COLUMNS:
        return pd.array(values, dtype=pd.Int64Dtype())
    return pd.Series(values, dtype=object)
