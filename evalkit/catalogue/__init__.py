"""Catalogues: cases, labels, rubrics, frozen constants and locale resources.

``load(path)`` reads and validates a catalogue folder; ``summarize`` gives the balance
tables that ``evalkit catalogue check`` prints. The file format is documented in
``docs/catalogue-format.md``.
"""

from evalkit.catalogue._catalogue import Catalogue
from evalkit.catalogue._check import near_duplicates, summarize
from evalkit.catalogue._io import LABEL_COLUMNS, load, read_labels
from evalkit.catalogue._models import (
    CATALOGUE_MAX_TURNS,
    GATED_STRATA,
    IDEATION_STRATA,
    MAX_TURNS,
    PRESENT_SIGNALS,
    Case,
    FrozenConstants,
    GateRule,
    Label,
    LocaleResources,
    Provenance,
    Rubric,
    RubricExample,
    Source,
    Turn,
)

__all__ = [
    "CATALOGUE_MAX_TURNS",
    "GATED_STRATA",
    "IDEATION_STRATA",
    "LABEL_COLUMNS",
    "MAX_TURNS",
    "PRESENT_SIGNALS",
    "Case",
    "Catalogue",
    "FrozenConstants",
    "GateRule",
    "Label",
    "LocaleResources",
    "Provenance",
    "Rubric",
    "RubricExample",
    "Source",
    "Turn",
    "load",
    "near_duplicates",
    "read_labels",
    "summarize",
]
