"""The relock gate over frozen constants, and the construct tools beside it.

``evaluate(ledger, labels, constants)`` is a pure function returning a
:class:`GateVerdict` whose reasons cite the ADR behind each rule.
"""

from evalkit.gate._advice import kappa_max, label_balance, rebalancing_advice
from evalkit.gate._breakdown import breakdown
from evalkit.gate._evaluate import FAILED_STATUSES, evaluate, thin_bins
from evalkit.gate._pairs import (
    PAIR_COLUMNS,
    final_turn_rows,
    join_pairs,
    labels_frame,
    repeated_answers,
)
from evalkit.gate._recall import miss_rate_upper_bound, recall_check
from evalkit.gate._verdict import ADR, DimensionVerdict, GateVerdict, Reason

__all__ = [
    "ADR",
    "FAILED_STATUSES",
    "PAIR_COLUMNS",
    "DimensionVerdict",
    "GateVerdict",
    "Reason",
    "breakdown",
    "evaluate",
    "final_turn_rows",
    "join_pairs",
    "kappa_max",
    "label_balance",
    "labels_frame",
    "miss_rate_upper_bound",
    "rebalancing_advice",
    "recall_check",
    "repeated_answers",
    "thin_bins",
]
