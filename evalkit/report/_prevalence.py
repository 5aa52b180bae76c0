"""The prevalence study's frames and displays: corrected bin shares beside the naive ones.

:func:`prevalence_study` builds, for one dimension, everything the page shows with
:mod:`evalkit.prevalence`: the pool and the labelled set, the four estimators' shares of
each bin with their intervals, the humans' own rate on the pool beside them (the truth the
intervals are checked against), the same per locale, and the labelling plan. The other
helpers display it.

The pool and the labelled set. By default the study splits the judged calibration pairs
by case at random: ``n_labelled`` cases form the labelled set (judge and human bins), the
others the pool, whose human labels the estimators never read. The human rate on the pool
is then known, and the labelled set is not the pool. With a ``pool`` given (any judged
ledger's pairs, :func:`evalkit.gate.pairs`), the labelled set is every calibration pair
and the human rate on the pool is read from whichever pool cases carry a label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from evalkit._chart import Chart
from evalkit.prevalence import (
    PrevalenceInputError,
    corrected_prevalence,
    expected_widths,
    plan_labels,
)
from evalkit.report._html import Html, pct, table
from evalkit.report._names import dimension_name, locale_name
from evalkit.report._summary import DESCRIPTIVE, Headline

#: Readable names of the estimators of :func:`evalkit.prevalence.corrected_prevalence`.
ESTIMATOR_NAMES = {
    "ppi++": "PPI++ (corrected)",
    "inversion": "Confusion inversion (corrected)",
    "judge_only": "Judge only (naive)",
    "labels_only": "Labels only",
}
#: The label budgets whose expected interval widths the plan shows.
BUDGETS = (50, 100, 200)


@dataclass(frozen=True)
class PrevalenceStudy:
    """One dimension of the prevalence study (see :func:`prevalence_study`)."""

    dimension: str
    pool: pd.DataFrame
    """Pool pairs: ``case_id``, ``judge``, ``human`` (missing where unknown; never read by
    the estimators), ``locale``, ``stratum``."""
    labelled: pd.DataFrame
    """Labelled pairs: ``case_id``, ``judge``, ``human``, ``locale``, ``stratum``."""
    shares: pd.DataFrame
    """:func:`~evalkit.prevalence.corrected_prevalence` overall, with ``human_pool`` (the
    humans' share of the bin on the pool), ``n_human_pool`` and ``covers`` (the interval
    contains ``human_pool``; None without a number)."""
    by_locale: pd.DataFrame
    """The same per locale (stratified PPI++ and inversion on the overall rows)."""
    widths: pd.DataFrame
    """:func:`~evalkit.prevalence.expected_widths` at :data:`BUDGETS`."""
    plan: pd.DataFrame
    """Per judge bin of the pool: cases, inclusion probability and expected labels of the
    plan at ``plan_budget``, and the cases one draw of it selects."""
    n_failed: int
    """Pool rows left out because the judge's answer was not usable."""
    split: bool
    """True when pool and labelled set are a random split of the calibration pairs."""
    level: float
    plan_budget: int


def labelled_split(
    pairs: pd.DataFrame, n_labelled: int, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pool, labelled)``: ``n_labelled`` cases drawn at random (by ``case_id``, every
    dimension of a case on the same side) with ``numpy.random.default_rng(seed)``.

    A :class:`~evalkit.prevalence.PrevalenceInputError` unless 1 ≤ ``n_labelled`` < the
    number of cases (the pool must keep a case).
    """
    ids = np.array(sorted(map(str, pairs["case_id"].unique())))
    if not 1 <= n_labelled < len(ids):
        raise PrevalenceInputError(
            f"n_labelled: must lie between 1 and {len(ids) - 1} (the cases less one), "
            f"got {n_labelled}"
        )
    chosen = set(np.random.default_rng(seed).choice(ids, size=n_labelled, replace=False))
    inside = pairs["case_id"].isin(chosen)
    return pairs[~inside].reset_index(drop=True), pairs[inside].reset_index(drop=True)


def _human_rate(shares: pd.DataFrame, pool: pd.DataFrame, by: str | None) -> pd.DataFrame:
    """``shares`` with the humans' share of each bin on ``pool`` and whether it is covered."""
    known = pool[pool["human"].notna()]
    groups: list[tuple[object, pd.DataFrame]] = [(None, known)]
    if by is not None:
        groups += [(str(k), g) for k, g in known.groupby(by)]
    rates = {
        (stratum, b): (float((g["human"] == b).mean()) if len(g) else np.nan, len(g))
        for stratum, g in groups
        for b in shares["bin"].unique()
    }
    keys = list(zip(shares["stratum"], shares["bin"], strict=True))
    human = [rates.get(k, (np.nan, 0)) for k in keys]
    out = shares.assign(
        human_pool=[h for h, _ in human], n_human_pool=[n for _, n in human]
    ).reset_index(drop=True)
    usable = out["ci_low"].notna() & out["human_pool"].notna()
    inside = (out["ci_low"] <= out["human_pool"]) & (out["human_pool"] <= out["ci_high"])
    out["covers"] = [bool(c) if u else None for c, u in zip(inside, usable, strict=True)]
    return out


def _plan(
    pool: pd.DataFrame, labelled: pd.DataFrame, bins: Sequence[str], budget: int, seed: int
) -> pd.DataFrame:
    planned = plan_labels(
        pool[["judge"]], labelled[["judge", "human"]], budget, bins=bins, seed=seed
    )
    grouped = planned.groupby("judge")
    frame = pd.DataFrame(
        {
            "cases": grouped.size(),
            "inclusion_probability": grouped["inclusion_probability"].mean(),
            "expected_labels": grouped["inclusion_probability"].sum(),
            "selected": grouped["selected"].sum().astype(int),
        }
    ).reindex(list(bins))
    frame = frame.rename_axis("judge").reset_index().dropna(subset=["cases"])
    return frame.astype({"cases": "int64", "selected": "int64"}).reset_index(drop=True)


def prevalence_study(
    pairs: pd.DataFrame,
    bins: Sequence[str],
    dimension: str,
    *,
    pool: pd.DataFrame | None = None,
    n_labelled: int = 120,
    seed: int = 0,
    level: float = 0.95,
    plan_budget: int = 100,
) -> PrevalenceStudy:
    """Corrected shares of ``dimension``'s bins, the human rate beside them, and the plan.

    ``pairs`` are complete judged pairs with human labels (gated strata, calibration
    split: ``evalkit.gate.pairs(..., complete=True)``), every dimension. Without ``pool``
    they are split by :func:`labelled_split` (``n_labelled`` cases, at most half of them, so
    that a small catalogue keeps a pool as large as its labelled set; ``seed``); with
    ``pool`` (pairs of any judged ledger; pairs whose judge answer is missing are left
    out and counted in ``n_failed``) all of ``pairs`` is the labelled set. Shares come from
    :func:`~evalkit.prevalence.corrected_prevalence` at ``level``, overall and
    ``by="locale"``; the plan from :func:`~evalkit.prevalence.expected_widths` and
    :func:`~evalkit.prevalence.plan_labels` with the labelled set as its calibration.
    """
    bins = list(bins)
    split = pool is None
    if pool is None:
        cap = pairs["case_id"].nunique() // 2
        pool_all, labelled = labelled_split(pairs, min(n_labelled, cap), seed)
    else:
        pool_all, labelled = pool, pairs
    keep = ["case_id", "judge", "human", "locale", "stratum"]
    pool_dim = pool_all[pool_all["dimension"] == dimension]
    usable = pool_dim["judge"].isin(bins)
    pool_rows = pool_dim[usable][keep].reset_index(drop=True)
    lab = labelled[labelled["dimension"] == dimension][keep].reset_index(drop=True)
    shares = corrected_prevalence(pool_rows[["judge"]], lab[["judge", "human"]], bins, level=level)
    local = corrected_prevalence(
        pool_rows[["judge", "locale"]],
        lab[["judge", "human", "locale"]],
        bins,
        by="locale",
        level=level,
    )
    widths = expected_widths(
        pool_rows[["judge"]], lab[["judge", "human"]], bins, BUDGETS, level=level
    )
    return PrevalenceStudy(
        dimension,
        pool_rows,
        lab,
        _human_rate(shares, pool_rows, None),
        _human_rate(local, pool_rows, "locale"),
        widths,
        _plan(pool_rows, lab, bins, plan_budget, seed),
        int((~usable).sum()),
        split,
        level,
        plan_budget,
    )


def prevalence_sets(studies: Sequence[PrevalenceStudy]) -> pd.DataFrame:
    """Per dimension: where the pool comes from, its size, how many of its cases carry a
    human label (the rate the estimates are checked against), the failed judge answers
    left out, and the labelled set's size."""
    return pd.DataFrame(
        [
            {
                "dimension": dimension_name(s.dimension),
                "pool": "calibration cases not drawn (labels hidden)" if s.split else "ledger",
                "pool_cases": len(s.pool),
                "pool_with_human_label": int(s.pool["human"].notna().sum()),
                "failed_answers_left_out": s.n_failed,
                "labelled_cases": len(s.labelled),
            }
            for s in studies
        ]
    )


def _estimate_text(r: pd.Series, *, mark: bool = True) -> str:
    """``12.9% [8.1%, 20.1%] ✓`` (✓/✗: the interval contains the human rate), or the status."""
    if r["status"] != "ok":
        return f"not estimated: {str(r['status']).replace('_', ' ')}"
    sign = {True: " ✓", False: " ✗"}.get(r["covers"], "") if mark else ""
    return f"{pct(r['estimate'])} [{pct(r['ci_low'])}, {pct(r['ci_high'])}]{sign}"


def shares_frame(shares: pd.DataFrame) -> pd.DataFrame:
    """One row per stratum and bin: the human rate on the pool, then each estimator's
    share and interval as text (✓ the interval contains the human rate, ✗ it does not)."""
    frame = shares.assign(
        text=[_estimate_text(r) for _, r in shares.iterrows()],
        stratum=shares["stratum"].fillna("all"),
    )
    wide = frame.pivot_table(
        index=["stratum", "bin"], columns="estimator", values="text", aggfunc="first", sort=False
    )
    human = frame.drop_duplicates(["stratum", "bin"]).set_index(["stratum", "bin"])
    wide.insert(0, "human_pool", human["human_pool"].map(pct))
    wide.insert(1, "n_pool", human["n_pool"])
    wide.insert(2, "n_labelled", human["n_labelled"])
    return wide.reset_index()[
        [
            "stratum",
            "bin",
            "human_pool",
            "n_pool",
            "n_labelled",
            *[e for e in ESTIMATOR_NAMES if e in wide.columns],
        ]
    ]


def shares_table(shares: pd.DataFrame, caption: str, level: float = 0.95) -> Html:
    """The shares of :func:`shares_frame` as a table."""
    frame = shares_frame(shares)
    stratified = bool((frame["stratum"] != "all").any())
    frame["stratum"] = [
        ("all (stratified)" if stratified else "all") if s == "all" else locale_name(s)
        for s in frame["stratum"]
    ]
    columns = {"stratum": "Replies"} if stratified else {}
    columns |= {
        "bin": "Bin",
        "human_pool": "Humans on the pool",
        "n_pool": "Pool",
        "n_labelled": "Labelled",
    }
    columns.update({e: n for e, n in ESTIMATOR_NAMES.items() if e in frame.columns})
    return table(
        frame,
        columns,
        caption=caption,
        note=f"Each estimate with its {level:.0%} interval; ✓ the interval contains the "
        "humans' rate on the pool, ✗ it does not. Judge only: the judge's share on the pool "
        "(its interval is blind to the judge's errors). Labels only: the humans' share on "
        "the labelled set. Not estimated: the named reason (ADR-0021).",
    )


def shares_chart(study: PrevalenceStudy) -> Chart:
    """Each estimator's share and interval per bin, the humans' rate on the pool as a bar."""
    data = study.shares[study.shares["status"] == "ok"].copy()
    data["estimator"] = data["estimator"].map(ESTIMATOR_NAMES)
    for col in ("estimate", "ci_low", "ci_high", "human_pool"):
        data[col] = data[col].astype(float)
    bins = list(dict.fromkeys(study.shares["bin"]))
    y = alt.Y("bin:N", sort=bins, title="Bin")
    offset = alt.YOffset("estimator:N", sort=list(ESTIMATOR_NAMES.values()))
    color = alt.Color("estimator:N", title="Estimator", sort=list(ESTIMATOR_NAMES.values()))
    base = alt.Chart(data)
    rules = base.mark_rule(strokeWidth=2).encode(
        y=y, yOffset=offset, x="ci_low:Q", x2="ci_high:Q", color=color
    )
    points = base.mark_point(filled=True, size=60).encode(
        y=y,
        yOffset=offset,
        color=color,
        x=alt.X("estimate:Q", title="Share of replies", axis=alt.Axis(format="%")),
        tooltip=[
            alt.Tooltip("estimator:N", title="Estimator"),
            alt.Tooltip("bin:N", title="Bin"),
            alt.Tooltip("estimate:Q", title="Estimate", format=".1%"),
            alt.Tooltip("ci_low:Q", title="Low", format=".1%"),
            alt.Tooltip("ci_high:Q", title="High", format=".1%"),
        ],
    )
    human = (
        alt.Chart(data.drop_duplicates("bin"))
        .mark_tick(color="black", thickness=2, size=56)
        .encode(
            y=y,
            x="human_pool:Q",
            tooltip=[alt.Tooltip("human_pool:Q", title="Humans on the pool", format=".1%")],
        )
    )
    title = f"{dimension_name(study.dimension)}: share of replies in each bin"
    spec = alt.layer(rules, points, human).properties(width=440, height=70 * len(bins), title=title)
    return Chart(
        spec,
        f"{title}: each estimator's estimate and {study.level:.0%} interval; "
        "black bar: the humans' rate on the pool",
    )


def widths_table(widths: pd.DataFrame, level: float = 0.95) -> Html:
    """Expected interval widths per budget, planned against random labelling, per bin."""
    wide = widths.pivot_table(
        index=["budget", "design"], columns="bin", values="expected_width", sort=False
    ).reset_index()
    bins = [c for c in wide.columns if c not in ("budget", "design")]
    return table(
        wide,
        {"budget": "Labels", "design": "Design", **{b: f"Width: {b}" for b in bins}},
        caption=f"Labelling plan: expected width of each bin's {level:.0%} interval",
        formats={b: pct for b in bins},
        note="Planned: cases drawn with probabilities that grow where the judge is less "
        "reliable (per the labelled set's confusion), estimated by inverse-probability "
        "weighting; random: every pool case equally likely. An expectation, not a promise. "
        "A budget as large as the pool labels every case: its width is 0.",
    )


def plan_table(plan: pd.DataFrame, budget: int) -> Html:
    """Per judge bin of the pool, how the plan at ``budget`` labels spreads its labels."""
    return table(
        plan,
        {
            "judge": "Judge bin",
            "cases": "Pool cases",
            "inclusion_probability": "Inclusion probability",
            "expected_labels": "Expected labels",
            "selected": "Selected in this draw",
        },
        caption=f"Which cases to label next: the plan at {budget} labels",
        formats={
            "inclusion_probability": lambda v: f"{float(v):.3f}",
            "expected_labels": lambda v: f"{float(v):.1f}",
        },
        note="Write the selected cases as a blind template with `evalkit prevalence plan`.",
    )


def prevalence_headline(studies: Sequence[PrevalenceStudy], bin: str = "high") -> Headline:
    """Per dimension, the PPI++ and judge-only shares of ``bin`` beside the humans' rate."""
    lines = []
    for s in studies:
        rows = s.shares[s.shares["bin"] == bin]
        parts = []
        for est, name in (("ppi++", "PPI++"), ("judge_only", "judge only")):
            r = rows[rows["estimator"] == est].iloc[0]
            parts.append(f"{name} {_estimate_text(r, mark=False)}")
        human = rows["human_pool"].iloc[0]
        parts.append(f"humans {pct(human)}")
        lines.append((f"{dimension_name(s.dimension)} “{bin}”", " · ".join(parts)))
    return Headline(DESCRIPTIVE, tuple(lines))
