"""Cumulative incidence against turns since onset: Kaplan–Meier, cluster bootstrap, RMST.

All functions take the output of :func:`evalkit.onset.time_to_event` (``latency`` in
agent turns from the onset, ``censored``). Time is discrete: latency 0 is the reply to
the onset turn. The incidence at ``t`` turns since onset is ``1 − S(t)``, the
Kaplan–Meier probability that the event has happened at latency ``≤ t``. A case
censored at latency ``c`` was observed event-free through agent turn ``c``, so it is
in the risk set at ``c`` and leaves after it (events before censorings at tied times).
Cases whose ``latency`` is NaN (no agent turn after the onset) are dropped.

The curve estimates the event distribution among conversations that continue; it is
not the share of cases with the event. Read it beside :mod:`evalkit.onset._observed`
(observed shares and censoring counts), above all when many cases are censored at 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.onset._tte import _groups

INCIDENCE_COLUMNS = (
    "turns_since_onset",
    "incidence",
    "ci_low",
    "ci_high",
    "n_risk",
    "n_events",
    "n_censored",
)


def _usable(tte: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    missing = [c for c in ("latency", "censored") if c not in tte.columns]
    if missing:
        raise ValueError(f"time-to-event frame: missing column(s) {missing}")
    ok = tte["latency"].notna().to_numpy()
    lat = tte["latency"].to_numpy(dtype=float)[ok]
    event = ~tte["censored"].to_numpy(dtype=bool)[ok]
    return lat, event


def cumulative_incidence(
    tte: pd.DataFrame,
    horizon: int = 5,
    *,
    level: float = 0.95,
    ci: str = "log-log",
) -> pd.DataFrame:
    """Kaplan–Meier cumulative incidence ``1 − S(t)`` for ``t = 0 … horizon`` turns since onset.

    The estimate is statsmodels' :class:`~statsmodels.duration.survfunc.SurvfuncRight`
    (``time = latency``, ``status = not censored``), read as a right-continuous step
    function at each integer ``t``; past the last observed time it stays flat.

    Confidence interval (``ci``):

    * ``"log-log"`` (default): pointwise, at ``level``, on the complementary log-log
      scale of ``S`` with Greenwood's standard error (statsmodels' ``surv_prob_se``):
      ``S(t) ** exp(±z·se / (S·|log S|))`` (R survival's ``conf.type="log-log"``).
      Where the transform is undefined (``S(t) = 1``: no event yet, or ``S(t) = 0``)
      the exact Clopper–Pearson bound for 0 of ``m`` (or ``m`` of ``m``) is used, ``m``
      being the cases observed through ``t`` (at ``S = 0``: the risk set at the last
      event), so that a curve at 0 still shows how little a small sample rules out.
    * ``"hall-wellner"``: statsmodels' ``simultaneous_cb`` (Hall–Wellner band, log
      transform), a simultaneous 95% band; only ``level=0.95``; NaN where undefined.

    Returns columns ``turns_since_onset``, ``incidence``, ``ci_low``, ``ci_high``,
    ``n_risk`` (cases at risk at ``t``: latency ≥ t), ``n_events`` (events at ``t``),
    ``n_censored`` (censored at ``t``). With no usable case, incidence and bounds are
    NaN. Raises ``ValueError`` for a negative horizon or an unknown ``ci``.
    """
    # Slow to import: only when used.
    from scipy.stats import beta, norm
    from statsmodels.duration.survfunc import SurvfuncRight

    if horizon < 0:
        raise ValueError(f"horizon must be >= 0, got {horizon}")
    if ci not in ("log-log", "hall-wellner"):
        raise ValueError(f"ci must be 'log-log' or 'hall-wellner', got {ci!r}")
    lat, event = _usable(tte)
    ts = np.arange(horizon + 1)
    n_risk = np.array([(lat >= t).sum() for t in ts])
    n_events = np.array([((lat == t) & event).sum() for t in ts])
    n_cens = np.array([((lat == t) & ~event).sum() for t in ts])
    out = pd.DataFrame(
        {
            "turns_since_onset": ts,
            "incidence": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "n_risk": n_risk,
            "n_events": n_events,
            "n_censored": n_cens,
        }
    )
    if len(lat) == 0:
        return out
    sf = SurvfuncRight(lat, event.astype(int))
    times = np.asarray(sf.surv_times, dtype=float)
    prob = np.asarray(sf.surv_prob, dtype=float)
    se = np.asarray(sf.surv_prob_se, dtype=float)
    # Position of the last step at or before t, in arrays padded with the value before
    # any event (S = 1, se = 0) at position 0.
    pos = np.searchsorted(times, ts, side="right")
    s = np.concatenate([[1.0], prob])[pos]
    s_se = np.concatenate([[0.0], se])[pos]
    out["incidence"] = 1.0 - s
    if ci == "hall-wellner":
        if level != 0.95:
            raise ValueError("the Hall–Wellner band is only available at level 0.95")
        with np.errstate(divide="ignore", invalid="ignore"):
            lcb, ucb = sf.simultaneous_cb()
        lcb = np.concatenate([[np.nan], np.asarray(lcb, dtype=float)])[pos]
        ucb = np.concatenate([[np.nan], np.asarray(ucb, dtype=float)])[pos]
        out["ci_low"] = 1.0 - ucb
        out["ci_high"] = 1.0 - lcb
        return out
    alpha = 1.0 - level
    z = float(norm.ppf(1.0 - alpha / 2))
    lows, highs = [], []
    last_event_risk = 0
    for t, s_t, se_t in zip(ts, s, s_se, strict=True):
        if n_events[t] > 0:
            last_event_risk = int(n_risk[t])
        if 0.0 < s_t < 1.0 and np.isfinite(se_t) and se_t > 0:
            theta = z * se_t / (s_t * abs(np.log(s_t)))
            s_low, s_high = s_t ** np.exp(theta), s_t ** np.exp(-theta)
            lows.append(1.0 - s_high)
            highs.append(1.0 - s_low)
        elif s_t >= 1.0:
            m = int((lat >= t).sum())
            lows.append(0.0)
            highs.append(float(beta.ppf(1 - alpha / 2, 1, m)) if m > 0 else 1.0)
        else:  # s_t == 0: every case left at risk had the event
            m = max(last_event_risk, 1)
            lows.append(float(beta.ppf(alpha / 2, m, 1)))
            highs.append(1.0)
    out["ci_low"] = lows
    out["ci_high"] = highs
    return out


def _weighted_km(
    lat: np.ndarray, event: np.ndarray, weights: np.ndarray, horizon: int
) -> np.ndarray:
    """Discrete-time KM survival at t = 0..horizon for each row of ``weights``.

    ``lat`` holds integer latencies; ``weights`` is (n_rep, n_cases) frequency weights.
    Returns S with shape (n_rep, horizon + 1). Equals statsmodels' KM for weights of 1.
    """
    surv = np.ones((weights.shape[0], horizon + 1))
    s = np.ones(weights.shape[0])
    for t in range(horizon + 1):
        n = weights @ (lat >= t).astype(float)
        d = weights @ ((lat == t) & event).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(n > 0, 1.0 - d / n, 1.0)
        s = s * factor
        surv[:, t] = s
    return surv


def _cluster_weights(
    clusters: np.ndarray, n_boot: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    labels, inverse = np.unique(clusters, return_inverse=True)
    k = len(labels)
    draws = rng.integers(0, k, size=(n_boot, k))
    counts = np.zeros((n_boot, k))
    np.add.at(counts, (np.repeat(np.arange(n_boot), k), draws.ravel()), 1.0)
    return counts[:, inverse], k


def _boot_survival(
    tte: pd.DataFrame, horizon: int, cluster: str, n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray, int]:
    if cluster not in tte.columns:
        raise ValueError(f"time-to-event frame: no cluster column {cluster!r}")
    ok = tte["latency"].notna().to_numpy()
    lat, event = _usable(tte)
    if np.any(lat != np.round(lat)):
        raise ValueError("latency must hold whole agent turns")
    point = _weighted_km(lat, event, np.ones((1, len(lat))), horizon)[0]
    if len(lat) == 0:
        return point, np.full((0, horizon + 1), np.nan), 0
    rng = np.random.default_rng(seed)
    w, k = _cluster_weights(tte[cluster].astype(str).to_numpy()[ok], n_boot, rng)
    return point, _weighted_km(lat, event, w, horizon), k


def bootstrap_incidence(
    tte: pd.DataFrame,
    horizon: int = 5,
    *,
    cluster: str = "template_family",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Cluster-bootstrap percentile interval of the KM incidence at each ``t ≤ horizon``.

    Whole clusters (template families by default) are resampled with replacement, so
    variants of one template move together; the KM incidence is recomputed on each
    replicate (weighted discrete KM, identical to statsmodels' for whole latencies).
    Returns ``turns_since_onset``, ``incidence`` (on the full data), ``boot_low``,
    ``boot_high``, ``n_clusters``, ``n_boot``. With one cluster the interval is
    degenerate; with no usable case everything is NaN.
    """
    point, reps, k = _boot_survival(tte, horizon, cluster, n_boot, seed)
    alpha = 1.0 - level
    inc = 1.0 - reps
    if len(inc):
        low = np.quantile(inc, alpha / 2, axis=0)
        high = np.quantile(inc, 1 - alpha / 2, axis=0)
    else:
        low = high = np.full(horizon + 1, np.nan)
    empty = not np.isfinite(point).all() or k == 0
    return pd.DataFrame(
        {
            "turns_since_onset": np.arange(horizon + 1),
            "incidence": np.full(horizon + 1, np.nan) if empty else 1.0 - point,
            "boot_low": low,
            "boot_high": high,
            "n_clusters": k,
            "n_boot": n_boot,
        }
    )


def rmst(
    tte: pd.DataFrame,
    horizon: int = 5,
    *,
    cluster: str | None = "template_family",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Restricted mean time to the event, in agent turns, up to ``horizon``.

    ``RMST(h) = Σ_{k=0}^{h−1} S(k) = E[min(T, h)]`` with ``T`` the latency and ``S``
    the KM survival: 0 when every case has the event in the reply to the onset, ``h``
    when none has it within ``h`` turns. Read it as "agent turns spent without the
    event, out of the first ``h`` after the onset". Past the longest follow-up the KM
    curve is carried flat, so ``max_followup < horizon − 1`` means extrapolation
    (reported in ``extrapolated``). Interval: cluster-bootstrap percentile by
    ``cluster`` (NaN if ``cluster`` is None or absent).

    Returns one row: ``horizon``, ``rmst``, ``ci_low``, ``ci_high``, ``n_cases``,
    ``max_followup``, ``extrapolated``.
    """
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    lat, event = _usable(tte)
    if cluster is not None and cluster in tte.columns:
        point, reps, _ = _boot_survival(tte, horizon, cluster, n_boot, seed)
        boot = reps[:, :horizon].sum(axis=1)
        alpha = 1.0 - level
        lo, hi = (
            (float(np.quantile(boot, alpha / 2)), float(np.quantile(boot, 1 - alpha / 2)))
            if len(boot)
            else (np.nan, np.nan)
        )
    else:
        point = _weighted_km(lat, event, np.ones((1, len(lat))), horizon)[0]
        lo = hi = np.nan
    max_fu = float(lat.max()) if len(lat) else np.nan
    return pd.DataFrame(
        [
            {
                "horizon": horizon,
                "rmst": float(point[:horizon].sum()) if len(lat) else np.nan,
                "ci_low": lo,
                "ci_high": hi,
                "n_cases": len(lat),
                "max_followup": max_fu,
                "extrapolated": bool(len(lat)) and max_fu < horizon - 1,
            }
        ]
    )


def recognition_within(
    tte: pd.DataFrame, turns: Sequence[int] = (0, 1, 2), *, level: float = 0.95
) -> pd.DataFrame:
    """KM estimate of the probability of the event within ``k`` agent turns, for each ``k``.

    The KM incidence at ``k`` with its log-log interval: columns ``within``,
    ``incidence``, ``ci_low``, ``ci_high``, ``n_risk``. It is an estimate among
    conversations that continue, not the share of cases in which the event was seen:
    with heavy censoring it extrapolates from the few cases still at risk. The observed
    share is :func:`evalkit.onset.observed_within`.
    """
    if not turns:
        raise ValueError("turns: give at least one horizon")
    inc = cumulative_incidence(tte, horizon=max(turns), level=level)
    sel = inc[inc["turns_since_onset"].isin(list(turns))]
    return sel.rename(columns={"turns_since_onset": "within"})[
        ["within", "incidence", "ci_low", "ci_high", "n_risk"]
    ].reset_index(drop=True)


def incidence_by(
    tte: pd.DataFrame,
    by: str | None,
    horizon: int = 5,
    *,
    level: float = 0.95,
    cluster: str | None = "template_family",
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`cumulative_incidence` per group of ``by`` (or overall for None), stacked.

    Adds ``by`` (the grouping column's name, ``"all"`` overall) and ``group`` (its value
    as text), and, when ``cluster`` is present in ``tte``, the cluster-bootstrap
    columns ``boot_low``/``boot_high`` of :func:`bootstrap_incidence`.
    """
    frames = []
    for name, sub in _groups(tte, by):
        inc = cumulative_incidence(sub, horizon, level=level)
        if cluster is not None and cluster in tte.columns:
            boot = bootstrap_incidence(
                sub, horizon, cluster=cluster, n_boot=n_boot, level=level, seed=seed
            )
            inc["boot_low"] = boot["boot_low"].to_numpy()
            inc["boot_high"] = boot["boot_high"].to_numpy()
        inc.insert(0, "group", name)
        inc.insert(0, "by", by or "all")
        frames.append(inc)
    return pd.concat(frames, ignore_index=True)
