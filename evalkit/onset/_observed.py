"""What the conversations let us observe: follow-up, censoring and observed shares.

The Kaplan–Meier curve of :mod:`evalkit.onset._km` estimates the event distribution
among conversations that *continue*: a conversation that ends without the event leaves
the risk set, and every later step rests on the conversations still going. When most
conversations end with the reply to the onset (censored at latency 0), the curve past
0 is extrapolated from the few that continue, and it is not the share of cases in which
the event happened. This module gives the plain counts to read beside it:

* :func:`observed_within`: the share of cases in which the event was *observed* within
  ``k`` replies, ``events at latency ≤ k / cases at risk at the onset``. It never
  extrapolates, so it is a floor: an event that would have come after a conversation
  ended is not counted. At ``k = 0`` it equals the KM incidence (nobody has left yet).
* :func:`censoring`: per curve, how many cases are censored, how many at latency 0, and
  how many are still followed at the next reply (the risk set the curve's later steps
  rest on).
* :func:`followup_lengths`: how many replies each conversation has after the reply to
  the onset, whatever the events; :func:`followup_note` says what that rules out.

All take the output of :func:`evalkit.onset.time_to_event` (or the per-turn frame for
follow-up). Cases whose ``latency`` is NaN (no agent turn after the onset) are not at
risk at the onset: they are left out of every denominator here, as the curves leave
them out, and counted as ``n_no_followup``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.onset._km import _usable
from evalkit.onset._tte import _groups, time_to_event

OBSERVED_COLUMNS = (
    "by",
    "group",
    "within",
    "n_cases",
    "n_observed",
    "observed_share",
    "n_censored_before",
)
CENSORING_COLUMNS = (
    "by",
    "group",
    "n_cases",
    "n_events",
    "observed_share",
    "n_censored",
    "share_censored",
    "n_censored_at_0",
    "n_risk_at_1",
    "max_followup",
    "n_no_followup",
)
FOLLOWUP_COLUMNS = ("replies_after_onset", "n_cases", "share")

#: How to continue conversations past the onset reply, as the runner offers it.
CONTINUE_WITH = (
    "evalkit.runner.run_conversations(cases, target, store=..., "
    "user=evalkit.runner.SimulatedUser(persona=PersonaCard(...), simulator=...))"
)


def observed_within(
    tte: pd.DataFrame, horizon: int | None = None, *, by: str | None = None
) -> pd.DataFrame:
    """Share of cases in which the event was observed within ``k`` replies of the onset.

    For each group (``by``; None: all cases) and each ``k = 0 … K``, where ``K`` is the
    group's longest follow-up (its largest latency, event or censored) capped at
    ``horizon`` when given:

    * ``n_cases``: cases at risk at the onset (latency not NaN);
    * ``n_observed``: cases with the event at latency ``≤ k``;
    * ``observed_share = n_observed / n_cases`` (no extrapolation: a floor for the
      share that would have the event within ``k`` if every conversation continued);
    * ``n_censored_before``: cases censored at a latency ``< k``: the conversation
      ended event-free before reply ``k``, so whether the event would have come by
      ``k`` is unknown. ``(n_observed + n_censored_before) / n_cases`` is the ceiling.

    Columns :data:`OBSERVED_COLUMNS` (``by`` is ``"all"`` overall, ``group`` the value as
    text). A group without a usable case has no row. Raises ``ValueError`` for a
    negative horizon, a missing column, or a ``by`` column absent from ``tte``.
    """
    if horizon is not None and horizon < 0:
        raise ValueError(f"horizon must be >= 0, got {horizon}")
    rows: list[dict[str, object]] = []
    for name, sub in _groups(tte, by):
        lat, event = _usable(sub)
        if len(lat) == 0:
            continue
        top = int(lat.max())
        if horizon is not None:
            top = min(top, horizon)
        for k in range(top + 1):
            n_obs = int(((lat <= k) & event).sum())
            rows.append(
                {
                    "by": by or "all",
                    "group": name,
                    "within": k,
                    "n_cases": len(lat),
                    "n_observed": n_obs,
                    "observed_share": n_obs / len(lat),
                    "n_censored_before": int(((lat < k) & ~event).sum()),
                }
            )
    return pd.DataFrame(rows, columns=list(OBSERVED_COLUMNS))


def censoring(tte: pd.DataFrame, *, by: str | None = None) -> pd.DataFrame:
    """Per curve (group of ``by``, or all cases): events, censoring, censoring at 0.

    One row per group, columns :data:`CENSORING_COLUMNS`:

    * ``n_cases``: cases at risk at the onset (latency not NaN), the curve's cases;
    * ``n_events``, ``observed_share``: cases with the event observed, and their share
      of ``n_cases`` (the observed share at the longest follow-up);
    * ``n_censored``, ``share_censored``: cases whose conversation ended without it;
    * ``n_censored_at_0``: censored at latency 0, i.e. the conversation ends with the
      reply to the onset, before any next reply;
    * ``n_risk_at_1``: cases still followed at reply 1 (latency ≥ 1), the risk set on
      which every step of the KM curve after reply 0 rests;
    * ``max_followup``: the largest latency (event or censored), whole replies; missing
      (``<NA>``) without a case;
    * ``n_no_followup``: cases with no agent turn after the onset (not in ``n_cases``).

    A group whose cases all lack follow-up has ``n_cases = 0`` and NaN shares.
    """
    rows: list[dict[str, object]] = []
    for name, sub in _groups(tte, by):
        lat, event = _usable(sub)
        n = len(lat)
        n_events = int(event.sum())
        n_cens = n - n_events
        rows.append(
            {
                "by": by or "all",
                "group": name,
                "n_cases": n,
                "n_events": n_events,
                "observed_share": n_events / n if n else np.nan,
                "n_censored": n_cens,
                "share_censored": n_cens / n if n else np.nan,
                "n_censored_at_0": int(((lat == 0) & ~event).sum()),
                "n_risk_at_1": int((lat >= 1).sum()),
                "max_followup": int(lat.max()) if n else pd.NA,
                "n_no_followup": int(sub["latency"].isna().sum()),
            }
        )
    out = pd.DataFrame(rows, columns=list(CENSORING_COLUMNS))
    out["max_followup"] = out["max_followup"].astype("Int64")
    return out


def describe_censoring(censored: pd.DataFrame) -> list[str]:
    """One plain sentence per row of :func:`censoring` (with an ``event`` column if any).

    E.g. "routed: observed in 72 of 192 cases (37.5%); 120 censored, 76 of them at
    reply 0 (the conversation ends with the onset reply); 55 still followed at reply 1."
    A row without a case says so.
    """
    out = []
    for r in censored.to_dict(orient="records"):
        parts = [str(r[k]) for k in ("event", "group") if k in r and r[k] != "all"]
        name = " / ".join(parts) or "all cases"
        n = int(r["n_cases"])
        if n == 0:
            out.append(f"{name}: no case with a reply to the onset.")
            continue
        out.append(
            f"{name}: observed in {int(r['n_events'])} of {n} cases "
            f"({r['observed_share']:.1%}); {int(r['n_censored'])} censored, "
            f"{int(r['n_censored_at_0'])} of them at reply 0 (the conversation ends with the "
            f"onset reply); {int(r['n_risk_at_1'])} still followed at reply 1."
        )
    return out


def followup_lengths(per_turn: pd.DataFrame) -> pd.DataFrame:
    """How many agent replies each conversation has after the reply to the onset.

    Counts, over cases with an onset and at least one agent turn at or after it, the
    agent replies observed after the onset reply (``replies_after_onset``: 0 means the
    conversation ends with the reply to the onset), whatever the events. Columns
    :data:`FOLLOWUP_COLUMNS`, one row per length from 0 to the longest (lengths no case
    has get ``n_cases = 0``); ``share`` is of the cases counted. Empty without such a
    case. Needs ``case_id``, ``turn``, ``onset_turn`` (see :func:`time_to_event`).
    """
    never = "_no_event_"
    tte = time_to_event(per_turn.assign(**{never: False}), never)
    lengths = tte["latency"].dropna().astype(int)
    if lengths.empty:
        return pd.DataFrame(columns=list(FOLLOWUP_COLUMNS))
    counts = lengths.value_counts().reindex(range(int(lengths.max()) + 1), fill_value=0)
    return pd.DataFrame(
        {
            "replies_after_onset": counts.index.astype(int),
            "n_cases": counts.to_numpy(dtype=int),
            "share": counts.to_numpy(dtype=float) / len(lengths),
        }
    )


def followup_note(followup: pd.DataFrame) -> str | None:
    """What :func:`followup_lengths` rules out, and how to observe more; None if nothing.

    When some conversations end with the reply to the onset, latency beyond that reply
    cannot be observed from them; the note gives their number and points to the
    simulated-user runner (:class:`evalkit.runner.SimulatedUser`), which plays the
    case's scripted turns up to the onset and then continues the conversation.
    """
    if followup.empty:
        return None
    total = int(followup["n_cases"].sum())
    at_0 = int(followup.loc[followup["replies_after_onset"] == 0, "n_cases"].sum())
    if at_0 == 0:
        return None
    longest = int(followup["replies_after_onset"].max())
    return (
        f"{at_0} of {total} conversations ({at_0 / total:.0%}) end with the agent's reply to "
        "the onset turn. For them, nothing after that reply can be observed: whether the "
        "agent would have acknowledged or routed one or two replies later is unknown, and no "
        f"curve or share on this page can tell. The longest conversation has {longest} "
        f"repl{'y' if longest == 1 else 'ies'} after the onset reply. To observe later "
        "replies, continue the conversations past the onset with the simulated-user "
        f"runner, {CONTINUE_WITH}, rebuild them with evalkit.runner.transcript_cases and "
        "judge every turn (turns='all'); the evalkit onset command replays the scripted "
        "user turns only."
    )
