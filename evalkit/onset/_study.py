"""The whole onset study from one per-turn frame: every table, then files on disk."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit._display import bullet_list, card, frame_table, key_values
from evalkit.onset._early import early_risk_scores
from evalkit.onset._km import incidence_by, recognition_within, rmst
from evalkit.onset._observed import censoring, followup_lengths, observed_within
from evalkit.onset._tte import EVENTS, events_table, false_alarms, persistence, time_to_event

#: Events whose incidence curves the study draws (recognition and routing first).
CURVE_EVENTS = ("signal_seen", "acknowledged", "routed")
#: Groupings of the incidence table (None = all cases).
GROUPINGS: tuple[str | None, ...] = (None, "stratum", "locale", "onset_position")


@dataclass
class OnsetStudy:
    """The tables of the onset study (each a DataFrame; see :func:`onset_study`)."""

    per_turn: pd.DataFrame
    cases: pd.DataFrame
    time_to_event: dict[str, pd.DataFrame]
    incidence: pd.DataFrame
    censoring: pd.DataFrame
    followup: pd.DataFrame
    within: pd.DataFrame
    rmst: pd.DataFrame
    false_alarms: pd.DataFrame
    persistence: pd.DataFrame
    early_risk: pd.DataFrame
    summary: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k} {len(t)}" for k, t in self.tables().items())
        lines = [f"OnsetStudy: {len(self.cases)} cases; rows per table: {sizes}"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        shapes = [(k, f"{len(t)} rows × {t.shape[1]} columns") for k, t in self.tables().items()]
        notes = bullet_list(self.notes) if self.notes else None
        return card(
            "Onset study",
            frame_table(self.summary, caption="Summary (one row per event)"),
            notes,
            key_values(shapes),
            subtitle=f"{len(self.cases)} cases",
        )

    def tables(self) -> dict[str, pd.DataFrame]:
        """Name → table, as written to CSV by :func:`write_study`."""
        out = {
            "per_turn": self.per_turn,
            "cases": self.cases,
            "incidence": self.incidence,
            "censoring": self.censoring,
            "followup": self.followup,
            "within": self.within,
            "rmst": self.rmst,
            "false_alarms": self.false_alarms,
            "persistence": self.persistence,
            "early_risk": self.early_risk,
            "summary": self.summary,
        }
        for e, tte in self.time_to_event.items():
            out[f"time_to_{e}"] = tte
        return out

    def curves(self, by: str = "all", *, followed_only: bool = False) -> pd.DataFrame:
        """Rows of ``incidence`` for one grouping (``"all"``, ``"stratum"``, ...), no ``by``.

        ``followed_only`` keeps the turns up to each curve's longest follow-up (where the
        observed share is defined); past it the KM value is only carried flat.
        """
        rows = _grouping(self.incidence, by)
        if followed_only and "observed_share" in rows.columns:
            rows = rows[rows["observed_share"].notna()].reset_index(drop=True)
        return rows

    def censored(self, by: str = "all") -> pd.DataFrame:
        """Rows of ``censoring`` for one grouping, without the ``by`` column."""
        return _grouping(self.censoring, by)


def _grouping(table: pd.DataFrame, by: str) -> pd.DataFrame:
    if table.empty or "by" not in table.columns:
        return table
    return table[table["by"] == by].drop(columns=["by"]).reset_index(drop=True)


def _median_latency(tte: pd.DataFrame) -> float:
    """KM median latency (first t with incidence ≥ 0.5), NaN if never reached."""
    from statsmodels.duration.survfunc import SurvfuncRight

    ok = tte["latency"].notna()
    if not ok.any():
        return np.nan
    sf = SurvfuncRight(tte.loc[ok, "latency"], (~tte.loc[ok, "censored"]).astype(int))
    return float(sf.quantile(0.5))


def onset_study(
    per_turn: pd.DataFrame,
    *,
    horizon: int = 5,
    events: Sequence[str] = CURVE_EVENTS,
    groupings: Sequence[str | None] = GROUPINGS,
    n_boot: int = 2000,
    seed: int = 0,
) -> OnsetStudy:
    """Compute every table of the onset study from the per-turn frame.

    ``incidence`` stacks :func:`incidence_by` for each event in ``events`` and each
    grouping (column ``event`` added), with KM log-log intervals and the
    template-family cluster bootstrap, and beside each KM value the observed share of
    :func:`~evalkit.onset.observed_within` (columns ``n_cases``, ``n_observed``,
    ``observed_share``, ``n_censored_before``; missing past the group's longest
    follow-up, where nothing is observed). ``censoring`` is :func:`censoring` per event
    and grouping; ``followup`` is :func:`followup_lengths` (replies after the onset
    reply, whatever the events). ``within`` is the KM estimate within 0, 1, 2
    turns per event; ``rmst`` the restricted mean time to each event up to
    ``horizon``; ``early_risk`` ERDE_2 and F_latency (k_half 3) for acknowledgement
    and routing. ``summary`` has one row per event: cases with an onset, events,
    censored share, KM median latency, median observed latency among events, and
    ``share_ending_at_onset_reply``: the share of the cases with an onset whose
    conversation ends with the reply to the onset (no later reply), the same for every
    event. A KM median of 0 replies says little when that share is large: those
    conversations can show an event at the onset reply and nowhere else.
    """
    present = [e for e in events if e in per_turn.columns]
    ttes = {e: time_to_event(per_turn, e) for e in [e for e in EVENTS if e in per_turn.columns]}
    notes: list[str] = []
    failed = int((per_turn.get("judge_status", pd.Series(dtype=str)) != "ok").sum())
    if failed:
        notes.append(f"{failed} agent turn(s) without an ok judgement count as 'no event'")
    incidence, censored, within, rm, early, summary = [], [], [], [], [], []
    followup = followup_lengths(per_turn)
    ending_at_onset = int(followup.loc[followup["replies_after_onset"] == 0, "n_cases"].sum())
    for e in present:
        tte = ttes[e]
        for by in groupings:
            if by is not None and by not in tte.columns:
                continue
            inc = incidence_by(tte, by, horizon, n_boot=n_boot, seed=seed)
            obs = observed_within(tte, horizon, by=by).rename(
                columns={"within": "turns_since_onset"}
            )
            inc = inc.merge(obs, on=["by", "group", "turns_since_onset"], how="left")
            for c in ("n_cases", "n_observed", "n_censored_before"):
                inc[c] = inc[c].astype("Int64")
            incidence.append(inc.assign(event=e))
            censored.append(censoring(tte, by=by).assign(event=e))
        within.append(recognition_within(tte).assign(event=e))
        rm.append(rmst(tte, horizon, n_boot=n_boot, seed=seed).assign(event=e))
        done = tte[~tte["censored"]]
        summary.append(
            {
                "event": e,
                "n_cases": len(tte),
                "n_events": len(done),
                "share_censored": float(tte["censored"].mean()) if len(tte) else np.nan,
                "km_median_latency": _median_latency(tte),
                "median_latency_among_events": (
                    float(done["latency"].median()) if len(done) else np.nan
                ),
                "n_no_followup": int(tte["latency"].isna().sum()),
                "share_ending_at_onset_reply": ending_at_onset / len(tte) if len(tte) else np.nan,
            }
        )
    for e in ("acknowledged", "routed"):
        if e in per_turn.columns and per_turn["onset_turn"].notna().any():
            early.append(early_risk_scores(per_turn, e))
    has_signal = "signal" in per_turn.columns and "acknowledged" in per_turn.columns
    persist = persistence(per_turn) if has_signal and "routed" in per_turn.columns else None

    def cat(frames: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def front(df: pd.DataFrame) -> pd.DataFrame:
        return df[["event", *[c for c in df.columns if c != "event"]]] if len(df) else df

    return OnsetStudy(
        per_turn=per_turn,
        cases=events_table(per_turn) if present else pd.DataFrame(),
        time_to_event=ttes,
        incidence=front(cat(incidence)),
        censoring=front(cat(censored)),
        followup=followup,
        within=front(cat(within)),
        rmst=front(cat(rm)),
        false_alarms=false_alarms(per_turn),
        persistence=persist if persist is not None else pd.DataFrame(),
        early_risk=cat(early),
        summary=pd.DataFrame(summary),
        notes=notes,
    )


def write_study(
    study: OnsetStudy, out: str | Path, *, formats: Sequence[str] = ("png", "svg")
) -> list[Path]:
    """Write every table as CSV and the figures in ``formats`` into ``out``; return the paths.

    Figures: ``swimmer``, ``incidence`` (overall curves of each event, KM band, observed
    share dashed),
    ``incidence_by_<grouping>`` (cluster-bootstrap bands), ``latency_<event>`` (the
    latency histogram with its "never" bar). Matplotlib is needed for the figures.
    """
    from evalkit.onset._plots import incidence_plot, latency_histogram, swimmer_plot

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for name, table in study.tables().items():
        p = root / f"{name}.csv"
        table.to_csv(p, index=False)
        paths.append(p)
    figures = {"swimmer": swimmer_plot(study.per_turn, max_cases=None)}
    inc = study.incidence
    if len(inc):
        figures["incidence"] = incidence_plot(
            inc[inc["by"] == "all"],
            title="After onset: KM estimate (solid, 95% CI) and observed share (dashed)",
        )
        for by in [b for b in inc["by"].unique() if b != "all"]:
            figures[f"incidence_by_{by}"] = incidence_plot(
                inc[inc["by"] == by],
                band="boot",
                title=f"By {by} (95% cluster bootstrap by template family)",
            )
    for e in ("acknowledged", "routed"):
        if e in study.time_to_event:
            figures[f"latency_{e}"] = latency_histogram(
                study.time_to_event[e], title=f"Latency to {e}"
            )
    for name, fig in figures.items():
        for fmt in formats:
            p = root / f"{name}.{fmt}"
            fig.savefig(p, dpi=150)
            paths.append(p)
    return paths
