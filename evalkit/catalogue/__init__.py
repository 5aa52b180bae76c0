"""Catalogues: cases, labels, rubrics, frozen constants and locale resources.

``load(path)`` reads and validates a catalogue folder; ``summarize`` gives the balance
tables that ``evalkit catalogue check`` prints; ``audit(catalogue)`` asks whether the
catalogue can be passed without reading the conversation (``evalkit catalogue audit``).
A catalogue holds several label sets (``Catalogue.label_sets``) and their consensus
(``Catalogue.labels``), built by ``ConsensusRule``. The file format is documented in
``docs/catalogue-format.md``.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.catalogue._audit import AuditResult, audit
    from evalkit.catalogue._catalogue import Catalogue
    from evalkit.catalogue._check import (
        labeler_agreement,
        labeler_coverage,
        near_duplicates,
        summarize,
    )
    from evalkit.catalogue._collect import Collector, CsvRow, parse_yaml, read_csv
    from evalkit.catalogue._consensus import ConsensusRule, build_consensus
    from evalkit.catalogue._io import LABEL_COLUMNS, load, read_labels
    from evalkit.catalogue._models import (
        CATALOGUE_MAX_TURNS,
        GATED_STRATA,
        IDEATION_STRATA,
        MAX_TURNS,
        PRESENT_SIGNALS,
        AuditRule,
        Case,
        CaseDesign,
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
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_audit": ["AuditResult", "audit"],
            "_catalogue": ["Catalogue"],
            "_check": ["labeler_agreement", "labeler_coverage", "near_duplicates", "summarize"],
            "_collect": ["Collector", "CsvRow", "parse_yaml", "read_csv"],
            "_consensus": ["ConsensusRule", "build_consensus"],
            "_io": ["LABEL_COLUMNS", "load", "read_labels"],
            "_models": [
                "CATALOGUE_MAX_TURNS",
                "GATED_STRATA",
                "IDEATION_STRATA",
                "MAX_TURNS",
                "PRESENT_SIGNALS",
                "AuditRule",
                "Case",
                "CaseDesign",
                "FrozenConstants",
                "GateRule",
                "Label",
                "LocaleResources",
                "Provenance",
                "Rubric",
                "RubricExample",
                "Source",
                "Turn",
            ],
        },
    )

__all__ = [
    "CATALOGUE_MAX_TURNS",
    "GATED_STRATA",
    "IDEATION_STRATA",
    "LABEL_COLUMNS",
    "MAX_TURNS",
    "PRESENT_SIGNALS",
    "AuditResult",
    "AuditRule",
    "Case",
    "CaseDesign",
    "Catalogue",
    "Collector",
    "ConsensusRule",
    "CsvRow",
    "FrozenConstants",
    "GateRule",
    "Label",
    "LocaleResources",
    "Provenance",
    "Rubric",
    "RubricExample",
    "Source",
    "Turn",
    "audit",
    "build_consensus",
    "labeler_agreement",
    "labeler_coverage",
    "load",
    "near_duplicates",
    "parse_yaml",
    "read_csv",
    "read_labels",
    "summarize",
]
