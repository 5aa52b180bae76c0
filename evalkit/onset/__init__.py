"""The onset-turn study: when does an agent first recognise a risk, relative to its onset?

Pure functions over tidy frames. Start from the per-turn frame (one row per agent
turn; :func:`per_turn_events` builds it from judge answers and transcripts), then
:func:`time_to_event` (latency in agent turns from the onset, right-censoring) and
:func:`cumulative_incidence` (Kaplan–Meier with intervals), read beside
:func:`observed_within` (the share in which the event was observed, never
extrapolated) and :func:`censoring` (how many cases each curve loses, and at which
reply). :func:`onset_study`
computes every table at once and :func:`write_study` writes tables and figures;
``evalkit onset`` runs the whole pipeline from the command line.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.onset._early import early_risk_scores, latency_penalty, lc, penalty_rate
    from evalkit.onset._events import PER_TURN_COLUMNS, per_turn_events
    from evalkit.onset._km import (
        bootstrap_incidence,
        cumulative_incidence,
        incidence_by,
        recognition_within,
        rmst,
    )
    from evalkit.onset._observed import (
        censoring,
        describe_censoring,
        followup_lengths,
        followup_note,
        observed_within,
    )
    from evalkit.onset._plots import (
        incidence_chart,
        incidence_plot,
        latency_histogram,
        swimmer_caption,
        swimmer_plot,
    )
    from evalkit.onset._study import OnsetStudy, onset_study, write_study
    from evalkit.onset._tte import EVENTS, events_table, false_alarms, persistence, time_to_event
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_early": ["early_risk_scores", "latency_penalty", "lc", "penalty_rate"],
            "_events": ["PER_TURN_COLUMNS", "per_turn_events"],
            "_km": [
                "bootstrap_incidence",
                "cumulative_incidence",
                "incidence_by",
                "recognition_within",
                "rmst",
            ],
            "_observed": [
                "censoring",
                "describe_censoring",
                "followup_lengths",
                "followup_note",
                "observed_within",
            ],
            "_plots": [
                "incidence_chart",
                "incidence_plot",
                "latency_histogram",
                "swimmer_caption",
                "swimmer_plot",
            ],
            "_study": ["OnsetStudy", "onset_study", "write_study"],
            "_tte": ["EVENTS", "events_table", "false_alarms", "persistence", "time_to_event"],
        },
    )

__all__ = [
    "EVENTS",
    "PER_TURN_COLUMNS",
    "OnsetStudy",
    "bootstrap_incidence",
    "censoring",
    "cumulative_incidence",
    "describe_censoring",
    "early_risk_scores",
    "events_table",
    "false_alarms",
    "followup_lengths",
    "followup_note",
    "incidence_by",
    "incidence_chart",
    "incidence_plot",
    "latency_histogram",
    "latency_penalty",
    "lc",
    "observed_within",
    "onset_study",
    "penalty_rate",
    "per_turn_events",
    "persistence",
    "recognition_within",
    "rmst",
    "swimmer_caption",
    "swimmer_plot",
    "time_to_event",
    "write_study",
]
