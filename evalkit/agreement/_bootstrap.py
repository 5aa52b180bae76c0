"""Percentile bootstrap intervals for two-rater agreement coefficients, vectorised.

How resamples are drawn
-----------------------
Every supported statistic is a function of the q × q table alone, so a resample is
represented by its table:

* Pairs (no ``clusters``): resampling n pairs with replacement and cross-tabulating them
  gives a table distributed exactly Multinomial(n, p̂), p̂ the observed cell proportions.
  All tables are drawn at once with ``Generator.multinomial(n, p̂, size=n_resamples)``;
  this is the ordinary nonparametric bootstrap, without materialising an index matrix.
* Clusters (e.g. template families): the G clusters are resampled with replacement; an
  index matrix ``(n_resamples, G)`` is turned into per-resample cluster multiplicities by
  one ``bincount`` and the resample tables are ``multiplicities @ cluster_tables``.

The statistic is then computed for all tables in one vectorised pass.  A resample on which
the statistic is undefined (Cohen's kappa with p_e = 1: both raters constant in the same
category) is dropped and counted in ``n_degenerate``; the interval uses the
``n_resamples_used`` remaining values.  Resamples where one rater is constant keep their
kappa of 0, which is the value of the statistic on that table.

The percentile interval is ``quantile(values, [(1 - level)/2, (1 + level)/2])`` (Efron &
Tibshirani 1993, ch. 13).  When the point estimate itself is not meaningful (its status is
not ``"ok"``) no interval is given: a constant rater would make every resample kappa 0,
an interval of zero width that means nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement._ac1 import ac1_from_table, ac1_parts
from evalkit.agreement._bp import bp_from_table, bp_parts, percent_agreement_parts
from evalkit.agreement._inputs import (
    FloatArray,
    agreement_weights,
    as_list,
    check_weights,
    is_missing,
    make_pairs,
    missing_note,
)
from evalkit.agreement._kappa import kappa_from_table, kappa_parts
from evalkit.agreement._results import NO_VARIATION, OK, TOO_FEW_PAIRS, BootstrapResult

STATISTICS = ("cohens_kappa", "gwet_ac1", "brennan_prediger", "percent_agreement")
_CHUNK_CELLS = 4_000_000  # index-matrix entries per block in the cluster bootstrap


def statistic_values(tables: FloatArray, statistic: str, w: FloatArray) -> FloatArray:
    """The statistic for every table in ``tables`` (shape ``(..., q, q)``); NaN if undefined."""
    if statistic == "cohens_kappa":
        return kappa_parts(tables, w)[0]
    if statistic == "gwet_ac1":
        return ac1_parts(tables, w)[0]
    if statistic == "brennan_prediger":
        return np.asarray(bp_parts(tables, w)[0])
    if statistic == "percent_agreement":
        return percent_agreement_parts(tables, w)
    raise ValueError(f"unknown statistic {statistic!r}: use one of {list(STATISTICS)}")


def _point(
    table: FloatArray, statistic: str, w: FloatArray, wname: str | None, cats: tuple[Any, ...]
) -> tuple[float | None, str, tuple[str, ...]]:
    """Point estimate, status and notes, with the same rules as the public functions."""
    if statistic == "cohens_kappa":
        r = kappa_from_table(table, w, categories=cats, weights_name=wname)
        return r.value, r.status, r.notes
    if statistic == "gwet_ac1":
        r = ac1_from_table(table, w if wname else None, categories=cats, weights_name=wname)
        return r.value, r.status, r.notes
    r = bp_from_table(table, w, categories=cats, weights_name=wname)
    if statistic == "brennan_prediger":
        return r.value, r.status, r.notes
    return r.p_observed if r.status == OK else None, r.status, r.notes


def resample_tables(table: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """``n_resamples`` pair-bootstrap tables, shape ``(n_resamples, q, q)``."""
    q = table.shape[0]
    n = round(float(table.sum()))
    p = table.ravel() / n
    draws = rng.multinomial(n, p, size=n_resamples)
    return draws.reshape(n_resamples, q, q).astype(np.float64)


def resample_cluster_tables(
    cluster_tables: FloatArray, n_resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Cluster-bootstrap tables from per-cluster tables of shape ``(G, q, q)``."""
    g, q, _ = cluster_tables.shape
    flat = cluster_tables.reshape(g, q * q)
    out = np.empty((n_resamples, q * q), dtype=np.float64)
    block = max(1, _CHUNK_CELLS // max(g, 1))
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        idx = rng.integers(0, g, size=(b, g))
        rows = np.repeat(np.arange(b), g)
        mult = np.bincount(rows * g + idx.ravel(), minlength=b * g).reshape(b, g)
        out[start : start + b] = mult @ flat
    return out.reshape(n_resamples, q, q)


def _cluster_ids(clusters: Any, keep: np.ndarray) -> np.ndarray:
    labels = as_list(clusters, "clusters")
    if len(labels) != keep.shape[0]:
        raise ValueError(
            f"clusters must have one label per pair: got {len(labels)} labels for "
            f"{keep.shape[0]} pairs"
        )
    for i, lab in enumerate(labels):
        if is_missing(lab):
            raise ValueError(f"clusters[{i}] is missing; every pair needs a cluster label")
    kept = [lab for lab, k in zip(labels, keep, strict=True) if k]
    codes, _ = pd.factorize(pd.Series(kept, dtype=object))
    return np.asarray(codes, dtype=np.int64)


def bootstrap_interval(
    a: Any,
    b: Any,
    categories: Any,
    statistic: str = "cohens_kappa",
    weights: str | None = None,
    n_resamples: int = 10000,
    seed: int | None = 0,
    clusters: Any = None,
    level: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap interval with its bookkeeping (see the module docstring).

    ``statistic`` is one of ``"cohens_kappa"``, ``"gwet_ac1"``, ``"brennan_prediger"``,
    ``"percent_agreement"``; ``weights`` is None, ``"linear"`` or ``"quadratic"``.
    ``clusters`` (one label per pair, e.g. the template family) switches to resampling
    whole clusters.  Pairs with a missing rating are dropped jointly before resampling.
    The same ``seed`` gives the same interval.
    """
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}: use one of {list(STATISTICS)}")
    wname = check_weights(weights)
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    n_resamples = int(n_resamples)
    pairs = make_pairs(a, b, categories)
    cids = _cluster_ids(clusters, pairs.keep) if clusters is not None else None
    q = pairs.q
    w = agreement_weights(q, wname)
    table = pairs.table()
    estimate, status, point_notes = _point(table, statistic, w, wname, pairs.categories)
    notes = list(missing_note(pairs.n_missing))
    notes += [x for x in point_notes if x not in notes]
    n_clusters = int(cids.max()) + 1 if cids is not None and cids.size else None

    def result(
        low: float | None, high: float | None, used: int, degenerate: int, status_: str
    ) -> BootstrapResult:
        return BootstrapResult(
            statistic=statistic,
            weights=wname,
            estimate=estimate,
            low=low,
            high=high,
            level=float(level),
            n_resamples=n_resamples,
            n_resamples_used=used,
            n_degenerate=degenerate,
            n=pairs.n,
            n_missing=pairs.n_missing,
            n_clusters=n_clusters,
            seed=seed,
            status=status_,
            notes=tuple(notes),
        )

    if status != OK:
        notes.append("no bootstrap interval: the point estimate is not meaningful")
        return result(None, None, 0, 0, status)
    if cids is not None and n_clusters is not None and n_clusters < 2:
        notes.append("fewer than 2 clusters: a cluster bootstrap is not possible")
        return result(None, None, 0, 0, TOO_FEW_PAIRS)
    rng = np.random.default_rng(seed)
    if cids is None:
        tables = resample_tables(table, n_resamples, rng)
    else:
        assert n_clusters is not None
        cell = pairs.a * q + pairs.b
        ct = np.bincount(cids * q * q + cell, minlength=n_clusters * q * q)
        tables = resample_cluster_tables(
            ct.reshape(n_clusters, q, q).astype(np.float64), n_resamples, rng
        )
    values = statistic_values(tables, statistic, w)
    ok = np.isfinite(values)
    used = int(ok.sum())
    degenerate = n_resamples - used
    if degenerate:
        notes.append(f"{degenerate} degenerate resample(s) (statistic undefined) dropped")
    if used == 0:
        notes.append("every resample was degenerate: no interval")
        return result(None, None, 0, degenerate, NO_VARIATION)
    alpha = 1.0 - float(level)
    low, high = np.quantile(values[ok], [alpha / 2.0, 1.0 - alpha / 2.0])
    return result(float(low), float(high), used, degenerate, OK)


def bootstrap_ci(
    a: Any,
    b: Any,
    categories: Any,
    statistic: str = "cohens_kappa",
    weights: str | None = None,
    n_resamples: int = 10000,
    seed: int | None = 0,
    clusters: Any = None,
    level: float = 0.95,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval ``(low, high)`` for a two-rater statistic.

    Thin wrapper over :func:`bootstrap_interval`, which also reports how many resamples
    were used and why an interval is missing.  ``(None, None)`` when the point estimate is
    not meaningful (for kappa: a constant rater, too few pairs) or every resample was
    degenerate.  ``clusters`` resamples whole clusters (template families).
    """
    res = bootstrap_interval(
        a,
        b,
        categories,
        statistic=statistic,
        weights=weights,
        n_resamples=n_resamples,
        seed=seed,
        clusters=clusters,
        level=level,
    )
    return res.low, res.high
