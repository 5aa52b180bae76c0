"""Figures of the onset study. Each function returns a figure and draws nothing else.

Matplotlib figures are built with :class:`matplotlib.figure.Figure` directly (no
pyplot, no global state, any backend); save them with ``fig.savefig(path)``. Altair
charts embed their data, aggregated to well under 5000 rows. Matplotlib and altair
are imported on first use: the rest of :mod:`evalkit.onset` needs neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

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


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


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
    ``max_cases`` keeps the first lanes after sorting (None: all). Missing event
    values (failed judgements) draw no marker.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    df = per_turn.copy()
    if only_onset:
        df = df[df["onset_turn"].notna()]
    if df.empty:
        fig = _figure(6, 2)
        fig.add_subplot().text(0.5, 0.5, "no case to show", ha="center", va="center")
        return fig
    first_routed = (
        df[df.get("routed", pd.Series(False, index=df.index)).astype("boolean").fillna(False)]
        .groupby("case_id")["turn"]
        .min()
    )
    order = (
        df.groupby("case_id", sort=False)
        .agg(onset=("onset_turn", "first"))
        .assign(routed=lambda f: first_routed.reindex(f.index).fillna(np.inf))
        .astype(float)
        .sort_values(["onset", "routed"], na_position="last", kind="stable")
    )
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
    ax.set_title(title or f"Swimmer plot: {len(ids)} case(s) with an onset")
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
    estimate flat, but nothing is observed.
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

            (line,) = ax.step(x, ext("incidence"), where="post", label=str(g))
            if band != "none" and lo in cur.columns:
                ax.fill_between(
                    x, ext(lo), ext(hi), step="post", alpha=0.18, color=line.get_color()
                )
        ax.set_title(str(ev))
        ax.set_xlabel("agent turns since onset")
        ax.set_ylim(0, 1)
        ax.set_xticks(sorted(set(sub["turns_since_onset"].astype(int))))
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("cumulative incidence (KM 1 − S)")
    if df["group"].nunique() > 1:
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


def incidence_chart(curves: pd.DataFrame, *, band: str = "ci") -> Any:
    """An altair layered chart (step line + band) of incidence curves; facets by ``event``.

    Same input as :func:`incidence_plot`. The chart's data is the curves table itself
    (a few rows per group and turn); raises ``ValueError`` beyond
    :data:`MAX_ALTAIR_ROWS` rows rather than embed a large data set.
    """
    import altair as alt

    if len(curves) >= MAX_ALTAIR_ROWS:
        raise ValueError(f"{len(curves)} rows: aggregate below {MAX_ALTAIR_ROWS} first")
    lo, hi = ("ci_low", "ci_high") if band == "ci" else ("boot_low", "boot_high")
    df = curves.copy()
    if "event" not in df.columns:
        df["event"] = "event"
    if "group" not in df.columns:
        df["group"] = "all"
    cols = ["event", "group", "turns_since_onset", "incidence", lo, hi]
    base = alt.Chart(df[cols]).encode(
        x=alt.X("turns_since_onset:O", title="agent turns since onset"),
        color=alt.Color("group:N"),
    )
    line = base.mark_line(interpolate="step-after").encode(
        y=alt.Y("incidence:Q", scale=alt.Scale(domain=[0, 1]), title="cumulative incidence")
    )
    area = base.mark_area(interpolate="step-after", opacity=0.2).encode(y=f"{lo}:Q", y2=f"{hi}:Q")
    return (area + line).properties(width=220, height=180).facet(column="event:N")
