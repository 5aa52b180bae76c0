"""Figures of the onset study. Each function returns a figure and draws nothing else.

Matplotlib figures are built from a :class:`matplotlib.figure.Figure` subclass directly
(no pyplot, no global state, any backend) that displays itself as a PNG in a notebook,
pyplot imported or not; save them with ``fig.savefig(path)``. :func:`incidence_chart`
returns an :class:`evalkit._chart.Chart` (drawn natively by JupyterLab and offline in the
reports) embedding its data, aggregated to well under 5000 rows. Matplotlib and altair
are imported on first use: the rest of :mod:`evalkit.onset` needs neither.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from evalkit._chart import Chart

#: Colour of each annotated signal level of a user turn (light to dark = weak to strong).
SIGNAL_COLOURS = {
    "none": "#eeeeee",
    "idiom": "#c6dbef",
    "distress": "#fdd49e",
    "masked": "#fc8d59",
    "explicit": "#b30000",
}
_AGENT_COLOUR = "#ffffff"
#: Marker of each agent event in the swimmer plot.
EVENT_MARKERS = {
    "signal_seen": ("o", "#4d4d4d", "judge sees signal"),
    "acknowledged": ("^", "#1f78b4", "acknowledged"),
    "routed": ("*", "#33a02c", "routed (crisis line)"),
    "escalated": ("D", "#6a3d9a", "escalated"),
}
MAX_ALTAIR_ROWS = 5000
_KM_LABEL = "Kaplan–Meier estimate"
_OBSERVED_LABEL = "observed share"


#: Resolution of a figure's PNG in a notebook.
NOTEBOOK_DPI = 110


@functools.cache
def _figure_class() -> type[Figure]:
    """A matplotlib ``Figure`` that displays itself as PNG in a notebook.

    A bare ``Figure`` made without pyplot shows as ``<Figure size 640x480 ...>`` in
    Jupyter unless the inline backend happens to be active; ``_repr_png_`` makes it draw.
    """
    from matplotlib.figure import Figure

    class NotebookFigure(Figure):
        def _repr_png_(self) -> bytes:
            buffer = io.BytesIO()
            self.savefig(buffer, format="png", dpi=NOTEBOOK_DPI, bbox_inches="tight")
            return buffer.getvalue()

    return NotebookFigure


def _figure(width: float, height: float) -> Figure:
    return _figure_class()(figsize=(width, height), layout="constrained")


def _lanes(per_turn: pd.DataFrame, only_onset: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows to draw and one row per case (``onset``, first ``routed`` turn), in lane order."""
    df = per_turn[per_turn["onset_turn"].notna()] if only_onset else per_turn
    if df.empty:
        return df, pd.DataFrame(columns=["onset", "routed"])
    routed = df.get("routed", pd.Series(False, index=df.index)).astype("boolean").fillna(False)
    first_routed = df[routed.to_numpy(dtype=bool)].groupby("case_id")["turn"].min()
    order = (
        df.groupby("case_id", sort=False)
        .agg(onset=("onset_turn", "first"))
        .assign(routed=lambda f: first_routed.reindex(f.index).fillna(np.inf))
        .astype(float)
        .sort_values(["onset", "routed"], na_position="last", kind="stable")
    )
    return df, order


def swimmer_caption(
    per_turn: pd.DataFrame, max_cases: int | None, *, only_onset: bool = True
) -> str:
    """What :func:`swimmer_plot` shows: "showing N of M cases with an onset (limit = L)".

    ``M`` counts the cases :func:`swimmer_plot` would draw with no limit, ``N`` those it
    draws with ``max_cases`` (``limit = none`` when None). Same arguments as the plot.
    """
    _, order = _lanes(per_turn, only_onset)
    total = len(order)
    shown = min(total, max_cases) if max_cases else total
    which = "cases with an onset" if only_onset else "cases"
    return f"showing {shown} of {total} {which} (limit = {max_cases or 'none'})"


def swimmer_plot(
    per_turn: pd.DataFrame,
    events: Sequence[str] = ("signal_seen", "acknowledged", "routed"),
    *,
    only_onset: bool = True,
    max_cases: int | None = 80,
    title: str | None = None,
) -> Figure:
    """One lane per case: user turns coloured by signal level, agent events as markers.

    ``per_turn`` is the per-turn frame (needs ``case_id``, ``turn``, ``onset_turn``,
    ``signal`` and the ``events``). The x axis is the message index of the
    conversation: user turns at ``turn − 1`` carry their annotated signal colour
    (:data:`SIGNAL_COLOURS`), agent turns are white cells with a marker per event
    (:data:`EVENT_MARKERS`); a black frame marks the onset turn. Lanes are sorted by onset,
    then by the first routed turn. ``only_onset`` keeps cases with an onset;
    ``max_cases`` keeps the first lanes after sorting (None: all); the default title
    says how many of how many are shown (:func:`swimmer_caption`). Missing event
    values (failed judgements) draw no marker.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    df, order = _lanes(per_turn, only_onset)
    if df.empty:
        fig = _figure(6, 2)
        fig.add_subplot().text(0.5, 0.5, "no case to show", ha="center", va="center")
        return fig
    ids = list(order.index[:max_cases] if max_cases else order.index)
    df = df[df["case_id"].isin(ids)]
    width = int(df["turn"].max()) + 1
    levels = list(SIGNAL_COLOURS)
    codes = np.full((len(ids), width), np.nan)
    row_of = {cid: r for r, cid in enumerate(ids)}
    for rec in df.itertuples(index=False):
        r, t = row_of[rec.case_id], int(cast(Any, rec.turn))
        codes[r, t] = len(levels)
        sig = getattr(rec, "signal", None)
        if t >= 1 and isinstance(sig, str) and sig in SIGNAL_COLOURS:
            codes[r, t - 1] = levels.index(sig)
    cmap = ListedColormap([*SIGNAL_COLOURS.values(), _AGENT_COLOUR]).with_extremes(bad="none")
    fig = _figure(min(2.0 + 0.55 * width, 12.0), min(1.5 + 0.18 * len(ids), 30.0))
    ax = fig.add_subplot()
    ax.imshow(
        np.ma.masked_invalid(codes),
        cmap=cmap,
        vmin=-0.5,
        vmax=len(levels) + 0.5,
        aspect="auto",
        interpolation="nearest",
    )
    for cid, onset in order.loc[ids, "onset"].items():
        if np.isfinite(onset):
            r = row_of[cid]
            ax.add_patch(
                Rectangle((onset - 0.5, r - 0.5), 1.0, 1.0, fill=False, edgecolor="black", lw=1.2)
            )
    handles: list[Any] = [
        Patch(facecolor=c, edgecolor="grey", label=k) for k, c in SIGNAL_COLOURS.items()
    ]
    for k, e in enumerate(e for e in events if e in df.columns):
        marker, colour, label = EVENT_MARKERS.get(e, ("x", "black", e))
        hit = df[df[e].astype("boolean").fillna(False).to_numpy(dtype=bool)]
        offset = (k - (len(events) - 1) / 2) * 0.22
        ax.scatter(
            hit["turn"].to_numpy(dtype=float) + offset,
            [row_of[c] for c in hit["case_id"]],
            marker=marker,
            s=22,
            color=colour,
            zorder=3,
        )
        handles.append(Line2D([], [], marker=marker, ls="", color=colour, label=label))
    handles.append(Patch(facecolor="none", edgecolor="black", label="onset turn"))
    ax.set_yticks(range(len(ids)), labels=ids, fontsize=6)
    ax.set_xticks(range(width))
    ax.set_xlabel("turn (message index; user turns even, agent turns odd)")
    ax.set_title(
        title or f"Swimmer plot: {swimmer_caption(per_turn, max_cases, only_onset=only_onset)}"
    )
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    return fig


def incidence_plot(
    curves: pd.DataFrame,
    *,
    band: str = "ci",
    title: str | None = None,
) -> Figure:
    """Step curves of cumulative incidence against turns since onset, with bands.

    ``curves`` is :func:`cumulative_incidence` or :func:`incidence_by` output,
    optionally stacked with an ``event`` column (one panel per event). Lines are
    drawn per ``group`` when that column exists. ``band``: ``"ci"`` (the KM interval
    ``ci_low``/``ci_high``), ``"boot"`` (``boot_low``/``boot_high``) or ``"none"``.
    Each value is drawn over ``[t, t + 1)``. When the table has ``n_risk``, a curve stops
    after the last turn with a case still at risk: beyond it the table carries the
    estimate flat, but nothing is observed. When it has ``observed_share`` (as
    :func:`onset_study`'s incidence table does), the observed share of each group is drawn
    beside its KM curve as a dashed step line of the same colour, where it is defined.
    """
    if band not in ("ci", "boot", "none"):
        raise ValueError(f"band must be 'ci', 'boot' or 'none', got {band!r}")
    lo, hi = ("ci_low", "ci_high") if band == "ci" else ("boot_low", "boot_high")
    df = curves.copy()
    if "event" not in df.columns:
        df["event"] = "event"
    if "group" not in df.columns:
        df["group"] = "all"
    events = list(dict.fromkeys(df["event"]))
    fig = _figure(4.2 * len(events) + 1.0, 3.6)
    axes = fig.subplots(1, len(events), sharey=True, squeeze=False)[0]
    for ax, ev in zip(axes, events, strict=True):
        sub = df[df["event"] == ev]
        for g, cur in sub.groupby("group", sort=False):
            if "n_risk" in cur.columns and (cur["n_risk"] > 0).any():
                cur = cur[
                    cur["turns_since_onset"]
                    <= cur.loc[cur["n_risk"] > 0, "turns_since_onset"].max()
                ]
            # Each value holds on [t, t + 1): repeat the last one at t + 1 so it shows.
            x = cur["turns_since_onset"].to_numpy(dtype=float)
            x = np.append(x, x[-1] + 1) if len(x) else x

            def ext(col: str, frame: pd.DataFrame = cur) -> np.ndarray:
                v = frame[col].to_numpy(dtype=float)
                return np.append(v, v[-1]) if len(v) else v

            (line,) = ax.step(x, ext("incidence"), where="post", label=f"{g} (KM)")
            if band != "none" and lo in cur.columns:
                ax.fill_between(
                    x, ext(lo), ext(hi), step="post", alpha=0.18, color=line.get_color()
                )
            if "observed_share" in cur.columns:
                obs = cur[cur["observed_share"].notna()]
                xo = obs["turns_since_onset"].to_numpy(dtype=float)
                if len(xo):
                    ax.step(
                        np.append(xo, xo[-1] + 1),
                        ext("observed_share", obs),
                        where="post",
                        ls="--",
                        color=line.get_color(),
                        label=f"{g} (observed share)",
                    )
        ax.set_title(str(ev))
        ax.set_xlabel("agent turns since onset")
        ax.set_ylim(0, 1)
        ax.set_xticks(sorted(set(sub["turns_since_onset"].astype(int))))
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("KM 1 − S (solid); observed share (dashed)")
    if df["group"].nunique() > 1 or "observed_share" in df.columns:
        by = str(df["by"].iloc[0]) if "by" in df.columns else None
        axes[-1].legend(fontsize=7, loc="lower right", title=by, title_fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def latency_histogram(tte: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Bars of latency (agent turns from onset) for cases with the event, plus a "never" bar.

    The last bar counts right-censored cases: the event was not seen in any observed
    agent turn after the onset (labelled "never (censored)": "never within the
    conversation", not "never at all"). Cases with unknown latency are not drawn.
    """
    done = tte[~tte["censored"] & tte["latency"].notna()]
    never = int((tte["censored"] & tte["latency"].notna()).sum())
    top = int(done["latency"].max()) if len(done) else 0
    counts = done["latency"].astype(int).value_counts().reindex(range(top + 1), fill_value=0)
    labels = [str(k) for k in counts.index] + ["never\n(censored)"]
    heights = [*counts.to_list(), never]
    fig = _figure(max(3.5, 0.6 * len(labels) + 1.5), 3.2)
    ax = fig.add_subplot()
    colours = ["#33a02c"] * len(counts) + ["#999999"]
    ax.bar(range(len(labels)), heights, color=colours)
    for i, h in enumerate(heights):
        ax.text(i, h, str(h), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)), labels=labels)
    ax.set_xlabel("latency (agent turns after onset)")
    ax.set_ylabel("cases")
    ax.set_title(title or f"Latency, {len(tte)} case(s)")
    return fig


def incidence_chart(
    curves: pd.DataFrame, *, band: str = "ci", description: str | None = None
) -> Chart:
    """A chart of incidence curves (step lines + band), faceted by ``event``.

    Same input as :func:`incidence_plot`. The Kaplan–Meier estimate is a solid step line
    with its band (``band``: ``"ci"``, ``"boot"`` or ``"none"``), drawn up to the last
    turn with a case at risk when the table has ``n_risk``. When the table has
    ``observed_share``, the observed share is a dashed line of the same colour where it
    is defined (up to the longest follow-up). The chart's data is the curves table in
    long form (a few rows per group and turn); raises ``ValueError`` beyond
    :data:`MAX_ALTAIR_ROWS` rows rather than embed a large data set. ``description`` is
    the chart's caption and accessible label (a sentence naming what is drawn by default).
    """
    import altair as alt

    from evalkit._chart import Chart

    if band not in ("ci", "boot", "none"):
        raise ValueError(f"band must be 'ci', 'boot' or 'none', got {band!r}")
    if len(curves) >= MAX_ALTAIR_ROWS:
        raise ValueError(f"{len(curves)} rows: aggregate below {MAX_ALTAIR_ROWS} first")
    lo, hi = ("ci_low", "ci_high") if band == "ci" else ("boot_low", "boot_high")
    df = curves.copy()
    if "event" not in df.columns:
        df["event"] = "event"
    if "group" not in df.columns:
        df["group"] = "all"
    if band == "none" or lo not in df.columns:
        df[lo] = df[hi] = np.nan
    keys = ["event", "group", "turns_since_onset"]
    km = df
    if "n_risk" in df.columns:
        last = df[df["n_risk"] > 0].groupby(["event", "group"])["turns_since_onset"].max()
        stop = last.reindex(pd.MultiIndex.from_frame(df[["event", "group"]])).to_numpy()
        km = df[~(df["turns_since_onset"].to_numpy(dtype=float) > stop)]
    parts = [
        km[[*keys, "incidence", lo, hi]]
        .rename(columns={"incidence": "share", lo: "low", hi: "high"})
        .assign(estimate=_KM_LABEL)
    ]
    if "observed_share" in df.columns:
        obs = df[df["observed_share"].notna()]
        parts.append(
            obs[[*keys, "observed_share"]]
            .rename(columns={"observed_share": "share"})
            .assign(low=np.nan, high=np.nan, estimate=_OBSERVED_LABEL)
        )
    long = pd.concat(parts, ignore_index=True)
    long["share"] = long["share"].astype(float)
    base = alt.Chart(long).encode(
        x=alt.X("turns_since_onset:O", title="agent replies since onset"),
        color=alt.Color("group:N"),
    )
    y = alt.Y("share:Q", scale=alt.Scale(domain=[0, 1]), title="share of cases")
    line = base.mark_line(interpolate="step-after").encode(
        y=y,
        strokeDash=alt.StrokeDash("estimate:N", sort=[_KM_LABEL, _OBSERVED_LABEL], title="line"),
    )
    # Points mark each value (a step-after line draws no segment after the last one).
    points = base.mark_point(filled=True, size=25).encode(
        y=y,
        shape=alt.Shape("estimate:N", sort=[_KM_LABEL, _OBSERVED_LABEL], legend=None),
        tooltip=[
            "event:N",
            "group:N",
            "turns_since_onset:O",
            "estimate:N",
            alt.Tooltip("share:Q", format=".3f"),
        ],
    )
    area = (
        base.transform_filter(alt.datum.estimate == _KM_LABEL)
        .mark_area(interpolate="step-after", opacity=0.2)
        .encode(y="low:Q", y2="high:Q")
    )
    events = [str(e) for e in dict.fromkeys(df["event"])]
    spec = (
        (area + line + points)
        .properties(width=220, height=180)
        .facet(column=alt.Column("event:N", sort=events, title=None))
    )
    shown = {"ci": "95% interval", "boot": "bootstrap interval", "none": "no band"}[band]
    return Chart(
        spec,
        description
        or f"Cumulative incidence of {', '.join(events)} against agent replies since onset "
        f"(Kaplan–Meier estimate, {shown})",
    )
