"""Inputs and outputs of the prevalence estimators: validation, counts, the tidy frame.

Every estimator of :mod:`evalkit.prevalence` reads two count arrays, never the raw
frames: the labelled set's confusion counts ``C[j, h]`` (judge bin ``j``, human bin ``h``)
and the pool's judge counts ``P[j]``. This module turns the frames into those counts,
checks them strictly, names strata, and holds the columns and statuses of the result.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.errors import GateInputError

#: Columns of :func:`evalkit.prevalence.corrected_prevalence`, in order.
RESULT_COLUMNS = (
    "estimator",
    "stratum",
    "bin",
    "estimate",
    "ci_low",
    "ci_high",
    "n_labelled",
    "n_pool",
    "status",
)
#: Estimators in the order their rows appear.
ESTIMATORS = ("ppi++", "inversion", "judge_only", "labels_only")

#: Status of a usable estimate. Every other status comes with NaN estimate and interval.
OK = "ok"
#: The pool (or the stratum of the pool) holds no judged case.
EMPTY_POOL = "empty_pool"
#: The stratum is in the pool but not in the labelled set.
STRATUM_NOT_LABELLED = "stratum_not_labelled"
#: Fewer labelled cases than bins: no estimator that reads labels is trusted.
FEWER_LABELLED_THAN_BINS = "fewer_labelled_than_bins"
#: A bin that no labelled case has as its human label.
EMPTY_BIN = "empty_bin"
#: The judge-given-human confusion matrix is singular or ill-conditioned (inversion only).
SINGULAR_CONFUSION = "singular_confusion"
#: Inversion put a bin's whole interval outside [0, 1] (or gave it no width): the
#: linearisation the interval rests on has failed there, and clipping would report a
#: confident [0, 0] or [1, 1] (inversion only).
OUT_OF_RANGE = "inversion_out_of_range"
#: Prefix of an overall (stratified) row whose strata are not all usable.
STRATUM_PREFIX = "stratum_"
#: Separator of the stratum name when ``by`` names several columns ("de / crisis").
STRATUM_SEPARATOR = " / "


class PrevalenceInputError(GateInputError, ValueError):
    """The prevalence inputs are unusable: a missing column, a value outside the bins.

    A :class:`~evalkit.errors.GateInputError` (exit code 2 in the CLI) and a
    ``ValueError``, so callers that catch either see it.
    """


def by_columns(by: str | Sequence[str] | None) -> list[str]:
    """``by`` as a list of column names (``None`` is no column)."""
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def check_frame(
    frame: pd.DataFrame, name: str, columns: Sequence[str], bins: Sequence[str]
) -> None:
    """Raise :class:`PrevalenceInputError` for a missing column, a missing value, or a
    bin column (``judge``, ``human``) holding a value that is not one of ``bins``."""
    if not isinstance(frame, pd.DataFrame):
        raise PrevalenceInputError(f"{name}: expected a DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise PrevalenceInputError(f"{name}: missing column(s) {missing}")
    allowed = set(bins)
    for col in columns:
        values = frame[col]
        if values.isna().any():
            row = values[values.isna()].index[0]
            raise PrevalenceInputError(
                f"{name} [row {row}] {col}: missing value; drop failed judge answers and "
                "unlabelled cases before estimating"
            )
        if col in ("judge", "human"):
            bad = values[~values.isin(allowed)]
            if len(bad):
                raise PrevalenceInputError(
                    f"{name} [row {bad.index[0]}] {col}: {bad.iloc[0]!r} is not one of {list(bins)}"
                )


def check_bins(bins: Sequence[str]) -> list[str]:
    """The bins as a list; at least two, no repeats."""
    out = [str(b) for b in bins]
    if len(out) < 2 or len(set(out)) != len(out):
        raise PrevalenceInputError(f"bins: need two or more distinct bins, got {out}")
    return out


def stratum_keys(frame: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """The stratum name of each row: the value of the one ``by`` column as text, or the
    values of several joined with :data:`STRATUM_SEPARATOR` (``"de / crisis"``)."""
    if not by:
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    parts = frame[list(by)].astype(str)
    return parts.agg(STRATUM_SEPARATOR.join, axis=1) if len(frame) else parts.iloc[:, 0]


def confusion_counts(labelled: pd.DataFrame, bins: Sequence[str]) -> np.ndarray:
    """``C[j, h]``: labelled cases with judge bin ``bins[j]`` and human bin ``bins[h]``."""
    index = {b: i for i, b in enumerate(bins)}
    counts = np.zeros((len(bins), len(bins)), dtype=np.int64)
    j = labelled["judge"].map(index).to_numpy(dtype=np.int64)
    h = labelled["human"].map(index).to_numpy(dtype=np.int64)
    np.add.at(counts, (j, h), 1)
    return counts


def judge_counts(pool: pd.DataFrame, bins: Sequence[str]) -> np.ndarray:
    """``P[j]``: pool cases with judge bin ``bins[j]``."""
    index = {b: i for i, b in enumerate(bins)}
    j = pool["judge"].map(index).to_numpy(dtype=np.int64)
    return np.bincount(j, minlength=len(bins)).astype(np.int64)


def labelled_status(counts: np.ndarray) -> str:
    """Status of a labelled confusion ``counts`` for the estimators that read labels.

    ``fewer_labelled_than_bins`` when it holds fewer cases than bins, ``empty_bin``
    when a bin is no labelled case's human label, else ``ok``.
    """
    n = int(counts.sum())
    if n < counts.shape[0]:
        return FEWER_LABELLED_THAN_BINS
    if (counts.sum(axis=0) == 0).any():
        return EMPTY_BIN
    return OK
