"""The corrected share of each bin, overall and per stratum, by four estimators side by side.

:func:`corrected_prevalence` is the public entry point; :func:`missed_share` derives the
"missed" share (signal present, lowest bin) from it. The estimators themselves live in
:mod:`._ppi`, :mod:`._inversion` and :mod:`._naive` and read counts only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.prevalence._frames import (
    EMPTY_POOL,
    ESTIMATORS,
    OK,
    OUT_OF_RANGE,
    RESULT_COLUMNS,
    SINGULAR_CONFUSION,
    STRATUM_NOT_LABELLED,
    STRATUM_PREFIX,
    PrevalenceInputError,
    by_columns,
    check_bins,
    check_frame,
    confusion_counts,
    judge_counts,
    labelled_status,
    stratum_keys,
)
from evalkit.prevalence._inversion import invert_confusion
from evalkit.prevalence._naive import effective_wilson, judge_only, labels_only, z_value
from evalkit.prevalence._ppi import ppi_bins

#: The bin name of the rows :func:`missed_share` returns.
MISSED = "missed"


@dataclass(frozen=True)
class _Cell:
    """One estimator on one stratum: per-bin estimate, bounds and a status (NaN numbers
    unless ``ok``); Wald estimators also keep the unclipped estimate and standard error
    that a stratified combination reads."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    status: str
    raw: np.ndarray | None = None
    se: np.ndarray | None = None


def _nan(k: int, status: str) -> _Cell:
    blank = np.full(k, np.nan)
    return _Cell(blank, blank, blank, status)


def _wald(estimate: np.ndarray, se: np.ndarray, z: float) -> _Cell:
    """A Wald cell (inversion), estimate and bounds clipped to [0, 1]; refused
    (:data:`OUT_OF_RANGE`) when some bin's unclipped interval misses [0, 1] or has no
    width, which clipping would turn into a confident [0, 0] or [1, 1]."""
    low, high = estimate - z * se, estimate + z * se
    if bool(np.any((high < 0.0) | (low > 1.0) | ~(se > 0.0))):
        return _nan(len(estimate), OUT_OF_RANGE)
    return _Cell(
        np.clip(estimate, 0.0, 1.0),
        np.clip(estimate - z * se, 0.0, 1.0),
        np.clip(estimate + z * se, 0.0, 1.0),
        OK,
        raw=estimate,
        se=se,
    )


def _wilson(estimate: np.ndarray, se: np.ndarray, z: float, n: int) -> _Cell:
    """A usable PPI++ cell: Wilson interval at the effective sample size, estimate
    clipped to [0, 1]."""
    low, high = effective_wilson(estimate, se, z, n)
    return _Cell(np.clip(estimate, 0.0, 1.0), low, high, OK, raw=estimate, se=se)


def _cells(confusion: np.ndarray, pool: np.ndarray, z: float, stratified: bool) -> dict[str, _Cell]:
    """The four estimators on one set of counts (see :func:`corrected_prevalence`)."""
    k = pool.shape[0]
    n, n_pool = int(confusion.sum()), int(pool.sum())
    lab_status = labelled_status(confusion)
    if stratified and n == 0:
        lab_status = STRATUM_NOT_LABELLED
    cells: dict[str, _Cell] = {}
    if n_pool == 0:
        cells["judge_only"] = _nan(k, EMPTY_POOL)
        cells["ppi++"] = cells["inversion"] = _nan(k, EMPTY_POOL)
    else:
        est, low, high = judge_only(pool, z)
        cells["judge_only"] = _Cell(est, low, high, OK)
        if lab_status != OK:
            cells["ppi++"] = cells["inversion"] = _nan(k, lab_status)
        else:
            cells["ppi++"] = _wilson(*ppi_bins(confusion, pool), z, n)
            p, cov, ok = invert_confusion(confusion, pool)
            cells["inversion"] = (
                _wald(p, np.sqrt(np.maximum(np.diagonal(cov), 0.0)), z)
                if bool(ok)
                else _nan(k, SINGULAR_CONFUSION)
            )
    if lab_status != OK:
        cells["labels_only"] = _nan(k, lab_status)
    else:
        est, low, high = labels_only(confusion, z)
        cells["labels_only"] = _Cell(est, low, high, OK)
    return cells


def _stratified(
    per_stratum: dict[str, dict[str, _Cell]],
    pool_n: dict[str, int],
    estimator: str,
    k: int,
    z: float,
    n: int,
) -> _Cell:
    """Pool-share-weighted combination: θ̂ = Σ_s w_s θ̂_s, se² = Σ_s w_s² se_s², with
    the interval of the estimator (``n`` labelled cases in all)."""
    total = sum(pool_n.values())
    if total == 0:
        return _nan(k, EMPTY_POOL)
    estimate, var = np.zeros(k), np.zeros(k)
    for stratum, cells in per_stratum.items():
        if pool_n[stratum] == 0:
            continue  # a stratum only in the labelled set is no part of the population
        cell = cells[estimator]
        if cell.status != OK:
            return _nan(k, STRATUM_PREFIX + cell.status)
        assert cell.raw is not None and cell.se is not None
        w = pool_n[stratum] / total
        estimate += w * cell.raw
        var += (w * cell.se) ** 2
    if estimator == "ppi++":
        return _wilson(estimate, np.sqrt(var), z, n)
    return _wald(estimate, np.sqrt(var), z)


def corrected_prevalence(
    pool: pd.DataFrame,
    labelled: pd.DataFrame,
    bins: Sequence[str],
    *,
    by: str | Sequence[str] | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """The share of each bin among the pool's replies, judge bias corrected.

    ``pool`` has a ``judge`` column (the judge's bin of each unlabelled reply) and the
    ``by`` columns; ``labelled`` has ``judge`` and ``human`` (both bins of each labelled
    reply) and the same ``by`` columns. The labelled set is taken as a random sample of
    the population the pool is drawn from (or of the pool itself); the target is the
    share of replies a human would put in each bin.

    Returns one row per estimator × (overall, then each stratum) × bin, columns
    :data:`RESULT_COLUMNS`:

    - ``ppi++``: power-tuned prediction-powered inference (:mod:`._ppi`), the Wilson
      interval at its effective sample size (:func:`._naive.effective_wilson`; the Wald
      interval of ``ppi_py`` under-covers rare bins);
    - ``inversion``: confusion-matrix inversion (:mod:`._inversion`), delta-method interval;
    - ``judge_only``: the judge's share on the pool, Wilson interval (biased by the judge);
    - ``labels_only``: the humans' share on the labelled set, Wilson interval.

    ``stratum`` is None on the overall rows; with ``by`` it is the stratum's value as
    text, several columns joined by ``" / "`` (``"de / crisis"``). With ``by``, the
    overall ``ppi++`` and ``inversion`` rows are *stratified*: per-stratum estimates
    weighted by the stratum's share of the pool (variances by the squared weights), so a
    judge that is better in one stratum than another is corrected in each. The overall
    ``judge_only`` row is the pool share (the same either way) and the overall
    ``labels_only`` row the plain labelled share, which assumes the labelled set is a
    simple random sample. Strata are the union of those in either frame.

    ``ppi++`` and ``inversion`` estimates and bounds are clipped to [0, 1]. ``status`` is
    ``ok`` or a named reason with NaN estimate and bounds: ``empty_pool`` (no pool case:
    every estimator but ``labels_only``); ``stratum_not_labelled``,
    ``fewer_labelled_than_bins`` or ``empty_bin`` (a bin no labelled case has as its
    human label) for the three estimators that read labels; ``singular_confusion`` for
    ``inversion``; ``stratum_<reason>`` on a stratified overall row when a stratum with
    pool cases has that reason. ``judge_only`` never reads labels and keeps its number.

    Raises :class:`~evalkit.prevalence.PrevalenceInputError` for a missing column, a
    missing value, a bin not in ``bins``, or a ``level`` outside (0, 1).
    """
    bins = check_bins(bins)
    cols = by_columns(by)
    check_frame(pool, "pool", ["judge", *cols], bins)
    check_frame(labelled, "labelled", ["judge", "human", *cols], bins)
    try:
        z = z_value(level)
    except ValueError as exc:
        raise PrevalenceInputError(f"level: {exc}") from None
    k = len(bins)
    overall: dict[str, _Cell]
    counts: list[tuple[str | None, int, int, dict[str, _Cell]]] = []
    if not cols:
        overall = _cells(confusion_counts(labelled, bins), judge_counts(pool, bins), z, False)
    else:
        pool_keys, lab_keys = stratum_keys(pool, cols), stratum_keys(labelled, cols)
        strata = sorted(set(pool_keys) | set(lab_keys))
        per_stratum: dict[str, dict[str, _Cell]] = {}
        pool_n: dict[str, int] = {}
        for s in strata:
            lab_s, pool_s = labelled[lab_keys == s], pool[pool_keys == s]
            per_stratum[s] = _cells(
                confusion_counts(lab_s, bins), judge_counts(pool_s, bins), z, True
            )
            pool_n[s] = len(pool_s)
            counts.append((s, len(lab_s), len(pool_s), per_stratum[s]))
        overall = _cells(confusion_counts(labelled, bins), judge_counts(pool, bins), z, False)
        for name in ("ppi++", "inversion"):
            overall[name] = _stratified(per_stratum, pool_n, name, k, z, len(labelled))
    counts.insert(0, (None, len(labelled), len(pool), overall))
    rows = []
    for estimator in ESTIMATORS:
        for stratum, n_lab, n_pool, cells in counts:
            cell = cells[estimator]
            for i, b in enumerate(bins):
                rows.append(
                    (
                        estimator,
                        stratum,
                        b,
                        float(cell.estimate[i]),
                        float(cell.low[i]),
                        float(cell.high[i]),
                        n_lab,
                        n_pool,
                        cell.status,
                    )
                )
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    frame["stratum"] = frame["stratum"].astype(object).where(frame["stratum"].notna(), None)
    return frame


def missed_share(
    pool: pd.DataFrame,
    labelled: pd.DataFrame,
    bins: Sequence[str],
    *,
    present: str,
    by: str | Sequence[str] | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """The "missed" share: among replies where the signal is present, the lowest bin's.

    "Missed" is dimension-specific (for self-harm: the user's latest turn carries a
    masked or explicit signal, and the reply is rated ``low``), so it is derived here
    rather than being a bin. ``present`` names a boolean column of both frames that says
    whether the signal is present in each case, from the case (its annotation), not
    from the judge. The frames are restricted to rows where it is true and
    :func:`corrected_prevalence` is run on them; the rows of ``bins[0]`` are returned
    with ``bin`` set to ``"missed"``. ``n_pool`` and ``n_labelled`` count signal-present
    cases only. A missing or non-boolean ``present`` column is a
    :class:`~evalkit.prevalence.PrevalenceInputError`.
    """
    bins = check_bins(bins)
    for name, frame in (("pool", pool), ("labelled", labelled)):
        if present not in frame.columns:
            raise PrevalenceInputError(f"{name}: missing column {present!r}")
        if not frame[present].isin([True, False]).all():
            raise PrevalenceInputError(f"{name} {present}: every value must be True or False")
    keep_pool = pool[pool[present].astype(bool)]
    keep_lab = labelled[labelled[present].astype(bool)]
    table = corrected_prevalence(keep_pool, keep_lab, bins, by=by, level=level)
    table = table[table["bin"] == bins[0]].assign(bin=MISSED)
    return table.reset_index(drop=True)
