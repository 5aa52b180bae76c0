"""The relock gate over frozen constants, and the construct tools beside it.

``evaluate(ledger, labels, catalogue)`` is a pure function returning a
:class:`GateVerdict` whose reasons cite the ADR behind each rule; its third argument is
the loaded :class:`~evalkit.catalogue.Catalogue` (preferred: strata, template families,
rubrics in force) or bare :class:`~evalkit.catalogue.FrozenConstants` (every row gated).
``evaluate(..., rubric_versions={dimension: version})`` gives the exploratory verdict of a
rubric variant on the rows judged under it: marked ``exploratory``, never ``passed``
(ADR-0017). ``pairs(ledger,
catalogue)`` is the frame of judge-versus-human pairs the gate reads (columns ``judge``,
``human`` and the case's metadata), accepted as is by every agreement function.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.gate._advice import kappa_max, label_balance, rebalancing_advice
    from evalkit.gate._breakdown import breakdown
    from evalkit.gate._departures import (
        departure_direction,
        departures_by,
        length_bias,
        reply_lengths,
    )
    from evalkit.gate._evaluate import FAILED_STATUSES, evaluate
    from evalkit.gate._identity import judges_frame, select_judge
    from evalkit.gate._labels import LabelHistory, label_history
    from evalkit.gate._pairs import (
        PAIR_COLUMNS,
        complete_rows,
        final_turn_rows,
        gated_rows,
        join_pairs,
        kappa_pairs,
        labels_frame,
        pairs,
        repeated_answers,
        study_pairs,
    )
    from evalkit.gate._recall import miss_rate_upper_bound, recall_check
    from evalkit.gate._threshold import thin_bins
    from evalkit.gate._verdict import ADR, DimensionVerdict, GateVerdict, Reason
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_advice": ["kappa_max", "label_balance", "rebalancing_advice"],
            "_breakdown": ["breakdown"],
            "_departures": ["departure_direction", "departures_by", "length_bias", "reply_lengths"],
            "_evaluate": ["FAILED_STATUSES", "evaluate"],
            "_identity": ["judges_frame", "select_judge"],
            "_labels": ["LabelHistory", "label_history"],
            "_pairs": [
                "PAIR_COLUMNS",
                "complete_rows",
                "final_turn_rows",
                "gated_rows",
                "join_pairs",
                "kappa_pairs",
                "labels_frame",
                "pairs",
                "repeated_answers",
                "study_pairs",
            ],
            "_recall": ["miss_rate_upper_bound", "recall_check"],
            "_threshold": ["thin_bins"],
            "_verdict": ["ADR", "DimensionVerdict", "GateVerdict", "Reason"],
        },
    )

__all__ = [
    "ADR",
    "FAILED_STATUSES",
    "PAIR_COLUMNS",
    "DimensionVerdict",
    "GateVerdict",
    "LabelHistory",
    "Reason",
    "breakdown",
    "complete_rows",
    "departure_direction",
    "departures_by",
    "evaluate",
    "final_turn_rows",
    "gated_rows",
    "join_pairs",
    "judges_frame",
    "kappa_max",
    "kappa_pairs",
    "label_balance",
    "label_history",
    "labels_frame",
    "length_bias",
    "miss_rate_upper_bound",
    "pairs",
    "rebalancing_advice",
    "recall_check",
    "repeated_answers",
    "reply_lengths",
    "select_judge",
    "study_pairs",
    "thin_bins",
]
