"""Read a catalogue that has no labels yet: what a label import checks its labels against.

``evalkit.catalogue.load`` reads a catalogue whole or not at all, and a catalogue whose
calibration cases are not all labelled is not whole; but that is exactly the catalogue a
label import fills. :func:`load_unlabelled` reads it with the loader's own readers (layout,
constants, resources, rubrics, cases: every problem of those is still a
:class:`~evalkit.errors.CatalogueError`) and leaves the label side out: the catalogue it
returns has no labels and no label sets. Cases whose final user turns repeat are not
refused here: whether they are declared minimal pairs is for the whole load to judge (the
shipped catalogue has such pairs). After the import, ``evalkit catalogue check`` reads the
whole catalogue again.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.catalogue import Catalogue, Collector
from evalkit.catalogue._io import (
    _load_cases,
    _load_constants,
    _load_resources,
    _load_rubrics,
    missing_folder,
)
from evalkit.catalogue._layout import check_layout
from evalkit.errors import CatalogueError, Problem


def load_unlabelled(path: str | Path) -> Catalogue:
    """The catalogue at ``path`` without its label side (see the module docstring)."""
    root = Path(path)
    if not root.is_dir():
        raise CatalogueError([Problem(str(root), None, None, missing_folder(root))])
    col = Collector(root)
    constants = _load_constants(root, col)
    check_layout(root, col, framing_file=constants.framing_file if constants else "framing.txt")
    resources = _load_resources(root, col)
    rubrics = _load_rubrics(root, constants, col)
    cases, _, case_files = _load_cases(root, resources, col, [])
    if col.problems or constants is None:
        raise CatalogueError(col.problems)
    return Catalogue(
        root=root,
        cases=tuple(cases),
        labels=(),
        rubrics=rubrics,
        constants=constants,
        resources=resources,
        case_files=case_files,
    )
