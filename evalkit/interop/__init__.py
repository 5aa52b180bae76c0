"""Interop: other tools' logs and labels in, label tasks out.

- :func:`from_inspect` reads Inspect AI eval logs (``evalkit[inspect]``) into an imported
  catalogue and the ledger records of one imported judge per scorer,
  ``imported:inspect/<scorer>``, mapped to the frozen bins by a :class:`ScoreMapping`
  (:func:`load_mapping`); :func:`write_import` writes them (``evalkit import inspect``).
- Label Studio: :func:`labelstudio_tasks` and :func:`labelstudio_config` (a blind task
  set), :func:`read_labelstudio_export` (its JSON export back, one label set per
  annotator; ``evalkit import labelstudio``).
- A long CSV ``case_id,dimension,bin,labeler``: :func:`read_long_csv`, :func:`long_csv`,
  :func:`long_csv_template` (``evalkit import csv``, ``evalkit labels export-csv``).

Formats and decisions: ``docs/interop.md``, ``docs/adr/0022-imported-judges.md``.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.interop._from_inspect import InspectImport, from_inspect, write_import
    from evalkit.interop._judged import judge_name
    from evalkit.interop._labels import label_sets, write_label_sets
    from evalkit.interop._labelstudio import (
        LabelStudioImport,
        labelstudio_config,
        labelstudio_tasks,
        read_labelstudio_export,
    )
    from evalkit.interop._long_csv import LONG_COLUMNS, long_csv, long_csv_template, read_long_csv
    from evalkit.interop._mapping import DimensionMapping, ScoreMapping, bin_for, load_mapping
    from evalkit.interop._problems import ImportProblems, InspectNotInstalled
    from evalkit.interop._unlabelled import load_unlabelled
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_from_inspect": ["InspectImport", "from_inspect", "write_import"],
            "_judged": ["judge_name"],
            "_labels": ["label_sets", "write_label_sets"],
            "_labelstudio": [
                "LabelStudioImport",
                "labelstudio_config",
                "labelstudio_tasks",
                "read_labelstudio_export",
            ],
            "_long_csv": ["LONG_COLUMNS", "long_csv", "long_csv_template", "read_long_csv"],
            "_mapping": ["DimensionMapping", "ScoreMapping", "bin_for", "load_mapping"],
            "_problems": ["ImportProblems", "InspectNotInstalled"],
            "_unlabelled": ["load_unlabelled"],
        },
    )

__all__ = [
    "LONG_COLUMNS",
    "DimensionMapping",
    "ImportProblems",
    "InspectImport",
    "InspectNotInstalled",
    "LabelStudioImport",
    "ScoreMapping",
    "bin_for",
    "from_inspect",
    "judge_name",
    "label_sets",
    "labelstudio_config",
    "labelstudio_tasks",
    "load_mapping",
    "load_unlabelled",
    "long_csv",
    "long_csv_template",
    "read_labelstudio_export",
    "read_long_csv",
    "write_import",
    "write_label_sets",
]
