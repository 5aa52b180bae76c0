"""Corrected prevalence: how often the agent's replies fall in each bin, judge bias removed.

A calibrated judge scores a large unlabelled pool; a small labelled set says how the
judge errs. :func:`corrected_prevalence` combines the two into the share of each bin,
overall and per stratum, by PPI++ and by confusion-matrix inversion, with the naive
judge-only and labels-only shares beside them, each with an interval and a status
(ADR-0021). :func:`missed_share` gives the "missed" share (signal present, lowest bin).
:func:`plan_labels` chooses which pool cases to label next with known inclusion
probabilities, :func:`planned_prevalence` estimates from such a sample by
inverse-probability weighting, and :func:`expected_widths` shows the interval each
budget buys. :func:`same_judge` refuses a pool and a labelled set scored by two judges
(the correction is valid only for the judge the labelled set calibrates).

Frames: ``pool`` has ``judge`` (a bin) and any stratum columns; ``labelled`` has
``judge`` and ``human``. Results are tidy frames with :data:`RESULT_COLUMNS`.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.prevalence._corrected import MISSED, corrected_prevalence, missed_share
    from evalkit.prevalence._frames import (
        ESTIMATORS,
        RESULT_COLUMNS,
        STRATUM_SEPARATOR,
        PrevalenceInputError,
    )
    from evalkit.prevalence._inversion import MAX_CONDITION, invert_confusion
    from evalkit.prevalence._naive import wilson_interval
    from evalkit.prevalence._plan import expected_widths, inclusion_probabilities, plan_labels
    from evalkit.prevalence._ppi import ppi_bins, ppi_lambda, ppi_mean
    from evalkit.prevalence._sources import judges, same_judge
    from evalkit.prevalence._weighted import planned_prevalence, weighted_difference
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_corrected": ["MISSED", "corrected_prevalence", "missed_share"],
            "_frames": [
                "ESTIMATORS",
                "RESULT_COLUMNS",
                "STRATUM_SEPARATOR",
                "PrevalenceInputError",
            ],
            "_inversion": ["MAX_CONDITION", "invert_confusion"],
            "_naive": ["wilson_interval"],
            "_plan": ["expected_widths", "inclusion_probabilities", "plan_labels"],
            "_ppi": ["ppi_bins", "ppi_lambda", "ppi_mean"],
            "_sources": ["judges", "same_judge"],
            "_weighted": ["planned_prevalence", "weighted_difference"],
        },
    )

__all__ = [
    "ESTIMATORS",
    "MAX_CONDITION",
    "MISSED",
    "RESULT_COLUMNS",
    "STRATUM_SEPARATOR",
    "PrevalenceInputError",
    "corrected_prevalence",
    "expected_widths",
    "inclusion_probabilities",
    "invert_confusion",
    "judges",
    "missed_share",
    "plan_labels",
    "planned_prevalence",
    "ppi_bins",
    "ppi_lambda",
    "ppi_mean",
    "same_judge",
    "weighted_difference",
    "wilson_interval",
]
