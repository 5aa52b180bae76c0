"""The charts of the study notebooks: Vega-Lite specs built with altair, drawn offline.

Each builder returns a :class:`~evalkit._chart.Chart`, which displays natively in a
notebook (JupyterLab, VS Code, nbconvert's HTML: see :mod:`evalkit._chart`) and is
drawn by the Vega bundle inlined once per report page. Matplotlib figures are
embedded as PNG by :func:`figure`.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from evalkit._chart import CHART_LOADER, SPEC_CLASS, Chart, charts_as_html, spec_json
from evalkit.report._html import Html, esc, paragraph

__all__ = [
    "CHART_LOADER",
    "SPEC_CLASS",
    "Chart",
    "chart",
    "charts_as_html",
    "confusion_heatmap",
    "figure",
    "group_kappa_chart",
    "marginals_chart",
    "power_chart",
    "spec_json",
    "stacked_share_chart",
]


def chart(spec: dict[str, Any] | alt.TopLevelMixin | Chart, description: str) -> Chart:
    """Wrap an altair chart (a Vega-Lite dict, or a chart to re-describe) for offline
    display in a notebook and a report."""
    return Chart(spec, description)


def figure(fig: Any, description: str, *, dpi: int = 110) -> Html | Chart:
    """Display a matplotlib figure as an embedded PNG (or an altair chart offline).

    The image is a ``data:`` URI inside the page, with ``description`` as its alternative
    text and caption: nothing is loaded from elsewhere.
    """
    if isinstance(fig, alt.TopLevelMixin | dict | Chart):
        return Chart(fig, description)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return Html(
        f'<figure class="ek-chart"><img class="ek-figure" src="data:image/png;base64,{data}" '
        f'alt="{esc(description)}"><figcaption>{esc(description)}</figcaption></figure>',
        description,
    )


def confusion_heatmap(
    confusion: pd.DataFrame,
    title: str,
    *,
    rows_title: str = "Judge answer",
    columns_title: str = "Human label",
) -> Chart:
    """Heatmap of a count table (rows: judge, columns: human by default), counts printed."""
    bins = [str(b) for b in confusion.index]
    long = [
        {"judge": str(j), "human": str(h), "count": int(confusion.loc[j, h])}
        for j in confusion.index
        for h in confusion.columns
    ]
    frame = pd.DataFrame(long)
    peak = max(int(frame["count"].max()), 1) if len(frame) else 1
    base = alt.Chart(frame).encode(
        x=alt.X("human:N", sort=bins, title=columns_title),
        y=alt.Y("judge:N", sort=bins, title=rows_title),
    )
    rect = base.mark_rect().encode(
        color=alt.Color(
            "count:Q", title="Cases", scale=alt.Scale(scheme="blues", domain=[0, peak])
        ),
        tooltip=[
            alt.Tooltip("judge:N", title=rows_title),
            alt.Tooltip("human:N", title=columns_title),
            alt.Tooltip("count:Q", title="Cases"),
        ],
    )
    text = base.mark_text(fontSize=14).encode(
        text="count:Q",
        color=alt.condition(alt.datum.count > peak / 2, alt.value("white"), alt.value("black")),
    )
    spec = (rect + text).properties(width=240, height=200, title=title)
    return Chart(
        spec, f"{title}: cases by {rows_title.lower()} (rows) and {columns_title.lower()} (columns)"
    )


def marginals_chart(frame: pd.DataFrame, bins: Sequence[str], title: str) -> Chart:
    """Grouped bars of each rater's share per bin (``frame`` from :func:`marginals`)."""
    long = pd.concat(
        [
            pd.DataFrame({"bin": frame["bin"], "rater": "Judge", "share": frame["judge_share"]}),
            pd.DataFrame({"bin": frame["bin"], "rater": "Human", "share": frame["human_share"]}),
        ],
        ignore_index=True,
    )
    long["share"] = long["share"].astype(float)
    spec = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("bin:N", sort=list(bins), title="Bin"),
            xOffset=alt.XOffset("rater:N"),
            y=alt.Y("share:Q", title="Share of cases", axis=alt.Axis(format="%")),
            color=alt.Color("rater:N", title="Rater"),
            tooltip=[
                alt.Tooltip("rater:N", title="Rater"),
                alt.Tooltip("bin:N", title="Bin"),
                alt.Tooltip("share:Q", title="Share", format=".1%"),
            ],
        )
        .properties(width=260, height=180, title=title)
    )
    return Chart(spec, f"{title}: share of cases in each bin, judge beside human")


def group_kappa_chart(
    frame: pd.DataFrame, group: str, threshold: float, title: str
) -> Chart | Html:
    """Kappa with its 95% interval per group; hollow points are descriptive-only cells.

    Groups without a kappa are left out; with none left, a sentence replaces the chart.
    """
    data = frame[["group", "n", "kappa", "ci_low", "ci_high", "descriptive"]].copy()
    data = data[data["kappa"].notna()]
    if data.empty:
        return paragraph(f"{title}: no group has a kappa to draw.", css="ek-table-note")
    for col in ("kappa", "ci_low", "ci_high"):
        data[col] = data[col].astype("float64")
    data["reading"] = data["descriptive"].map(
        {True: "descriptive (small cell)", False: "gating size"}
    )
    data = data.drop(columns="descriptive")
    y = alt.Y("group:N", title=group, sort=list(data["group"]))
    with_ci = data[data["ci_low"].notna() & data["ci_high"].notna()]
    points = (
        alt.Chart(data)
        .mark_point(size=80, filled=True)
        .encode(
            y=y,
            x=alt.X("kappa:Q", title="Cohen's kappa"),
            shape=alt.Shape("reading:N", title="Cell"),
            tooltip=[
                alt.Tooltip("group:N", title=group),
                alt.Tooltip("n:Q", title="Pairs"),
                alt.Tooltip("kappa:Q", title="Kappa", format=".3f"),
            ],
        )
    )
    line = (
        alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(strokeDash=[4, 4], color="firebrick")
        .encode(x="threshold:Q")
    )
    layers: list[Any] = [points, line]
    if len(with_ci):
        rule = alt.Chart(with_ci).mark_rule().encode(y=y, x="ci_low:Q", x2="ci_high:Q")
        layers.insert(0, rule)
    spec = alt.layer(*layers).properties(width=420, height=max(60, 28 * len(data)), title=title)
    return Chart(spec, f"{title}: kappa and 95% interval per {group}; dashed line: gate threshold")


def power_chart(frame: pd.DataFrame, threshold: float, n: int, title: str) -> Chart:
    """Probability of passing the gate against the true kappa, at the current sample size."""
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "true_kappa": frame["true_kappa"],
                    "rule": "lower 95% bound ≥ threshold",
                    "p": frame["p_pass_lower_bound"],
                }
            ),
            pd.DataFrame(
                {
                    "true_kappa": frame["true_kappa"],
                    "rule": "point estimate ≥ threshold",
                    "p": frame["p_pass_point"],
                }
            ),
        ],
        ignore_index=True,
    )
    line = (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X("true_kappa:Q", title="True kappa of the judge", scale=alt.Scale(zero=False)),
            y=alt.Y(
                "p:Q",
                title="Probability of passing",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=alt.Color("rule:N", title="Pass rule"),
            tooltip=[
                alt.Tooltip("true_kappa:Q", title="True kappa", format=".2f"),
                alt.Tooltip("rule:N", title="Rule"),
                alt.Tooltip("p:Q", title="P(pass)", format=".1%"),
            ],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(strokeDash=[4, 4], color="firebrick")
        .encode(x="threshold:Q")
    )
    spec = (line + rule).properties(width=420, height=220, title=title)
    return Chart(
        spec,
        f"{title}: simulated probability of passing with {n} pairs, by pass rule, for a judge "
        "whose true kappa is on the x axis; dashed line: gate threshold",
    )


def stacked_share_chart(
    frame: pd.DataFrame,
    *,
    x: str,
    color: str,
    facet: str | None,
    bins: Sequence[str],
    title: str,
    x_title: str,
    color_title: str,
) -> Chart:
    """Stacked bars of counts of ``color`` per ``x`` (long ``frame`` with a ``count`` column)."""
    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:N", title=x_title),
        "y": alt.Y("count:Q", title="Cases", stack="normalize", axis=alt.Axis(format="%")),
        "color": alt.Color(
            f"{color}:N",
            title=color_title,
            sort=list(bins),
            scale=alt.Scale(domain=list(bins), scheme="orangered"),
        ),
        "order": alt.Order("order:Q"),
        "tooltip": [
            alt.Tooltip(f"{x}:N", title=x_title),
            alt.Tooltip(f"{color}:N", title=color_title),
            alt.Tooltip("count:Q", title="Cases"),
        ],
    }
    data = frame.copy()
    rank = {b: i for i, b in enumerate(bins)}
    data["order"] = data[color].map(rank)
    base = alt.Chart(data).mark_bar().encode(**enc).properties(width=200, height=200)
    if facet:
        enc["tooltip"].append(alt.Tooltip(f"{facet}:N"))
        spec: Any = base.facet(column=alt.Column(f"{facet}:N", title=None)).properties(title=title)
    else:
        spec = base.properties(title=title)
    return Chart(spec, f"{title}: share of cases in each bin")
