"""The catalogue an import writes: the template's frozen constants, the mapping's rubrics.

An imported catalogue keeps what a study may not tweak from a template catalogue
(``--like``, by default the shipped ``catalogues/``): the bins, the gate rule, the
anchoring text, the audit ceiling, the framing template and the locale resources. It
declares its own dimensions, those of the mapping, each with rubric ``v1`` written from
the mapping's construct and anchors (not presence-gated). Changing a dimension changes
the constants' identity, so the gate hard-fails until the constants are ratified by the
user's own decision record (``evalkit constants ratify --adr``; ADR-0013, ADR-0022).

Layout written (``docs/catalogue-format.md``)::

    constants.yaml  framing.txt  resources.yaml
    rubrics/<dimension>.v1.yaml
    cases/calibration/<locale>/inspect.yaml
    labels/.gitkeep      label sets come later (Label Studio or a long CSV)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from evalkit.catalogue import Case, Catalogue, Rubric
from evalkit.interop._mapping import ScoreMapping

RUBRIC_VERSION = "v1"
_HEADER = (
    "# Written by `evalkit import`: the frozen constants of the template catalogue, with the\n"
    "# dimensions of the mapping file. A changed constant is a recorded decision: write an\n"
    "# ADR and run `evalkit constants ratify --catalogue . --adr docs/adr/NNNN-title.md`.\n"
)


def imported_catalogue(
    like: Catalogue, mapping: ScoreMapping, cases: Sequence[Case], root: Path
) -> Catalogue:
    """The catalogue of an import, in memory (no labels yet): see the module docstring."""
    bins = like.constants.bins
    dims = tuple(mapping.dimensions)
    constants = like.constants.model_copy(
        update={"gated_dimensions": dims, "rubrics_in_force": dict.fromkeys(dims, RUBRIC_VERSION)}
    )
    rubrics = {
        (dim, RUBRIC_VERSION): Rubric.model_validate(
            {
                "dimension": dim,
                "version": RUBRIC_VERSION,
                "presence_gated": False,
                "construct": rule.construct_text,
                "anchors": {b: rule.anchors[b] for b in bins},
            }
        )
        for dim, rule in mapping.dimensions.items()
    }
    return Catalogue(
        root=root,
        cases=tuple(cases),
        labels=(),
        rubrics=rubrics,
        constants=constants,
        resources=dict(like.resources),
        case_files={c.id: f"cases/calibration/{c.locale}/inspect.yaml" for c in cases},
    )


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _case_record(case: Case) -> dict[str, Any]:
    """The case as its file holds it: no ``injected_bin`` off canaries, no assistant signal."""
    record = case.model_dump(mode="json")
    if record["injected_bin"] is None:
        del record["injected_bin"]
    for turn in record["turns"]:
        if turn["signal"] is None:
            del turn["signal"]
    return record


def catalogue_files(catalogue: Catalogue) -> dict[str, str]:
    """Relative path → text of every file of the catalogue (see the module docstring)."""
    constants = catalogue.constants.model_dump(mode="json", exclude={"framing"})
    files = {
        "constants.yaml": _HEADER + _dump(constants),
        catalogue.constants.framing_file: catalogue.constants.framing,
        "resources.yaml": _dump(
            {"locales": [r.model_dump(mode="json") for r in catalogue.resources.values()]}
        ),
        "labels/.gitkeep": "",
    }
    for (dim, version), rubric in catalogue.rubrics.items():
        files[f"rubrics/{dim}.{version}.yaml"] = _dump(
            rubric.model_dump(mode="json", by_alias=True, exclude={"examples"})
        )
    by_locale: dict[str, list[dict[str, Any]]] = {}
    for case in catalogue.cases:
        by_locale.setdefault(case.locale, []).append(_case_record(case))
    for locale, rows in by_locale.items():
        files[f"cases/calibration/{locale}/inspect.yaml"] = _dump({"cases": rows})
    return files
