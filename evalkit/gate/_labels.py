"""Which labels the gate may read, and whether they were fixed before the judge answered.

Two rules (ADR-0030):

* **Declared labels only.** Calibration evidence reads the catalogue's consensus, or one
  label set the catalogue declares (said in a note). Any other labels (a file given with
  ``--labels``, a frame built in a notebook) make the run exploratory: a hard fail that
  names where the labels came from and says the verdict is not gate evidence, so a file
  holding the judge's own bins can never turn FAIL into PASS.
* **Labels before answers.** In a git checkout the label files' last commit must be no
  later than the judge's first answer on the split, and the files must hold no changes
  that are not committed; otherwise the labels may follow the answers (a hard fail). Outside
  git the gate cannot tell and says so in a note. The times compared are the committer date
  and the ledger's ``created_at``: both can be set by whoever writes them, so this catches
  the honest mistake and the casual edit, not a forger of git history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalkit.catalogue import Catalogue, Label
from evalkit.gate._verdict import Reason

_COLS = ["case_id", "dimension", "bin"]


def _triples(frame: pd.DataFrame) -> set[tuple[str, ...]]:
    return set(map(tuple, frame[_COLS].astype(str).to_numpy()))


def same_labels(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two label frames hold the same (case, dimension, bin) triples."""
    return len(a) == len(b) and _triples(a) == _triples(b)


def declared_set(lab: pd.DataFrame, sets: Mapping[str, Sequence[Label]]) -> str | None:
    """The name of the declared label set holding exactly ``lab``'s triples, if any."""
    want = _triples(lab)
    for name, labels in sets.items():
        if {(x.case_id, x.dimension, x.bin) for x in labels} == want:
            return name
    return None


def source_reasons(
    lab: pd.DataFrame, catalogue: Catalogue, labels_from: str | None
) -> tuple[str, list[Reason]]:
    """Where non-consensus calibration labels come from: ``(description, reasons)``."""
    name = declared_set(lab, catalogue.label_sets)
    where = labels_from or "labels given to evaluate()"
    if name is not None:
        return f"label set {name}", [
            Reason(
                "one_label_set",
                "note",
                f"the labels are one declared label set ({name}, from {where}), not the "
                "consensus of all sets",
                "adr-0030",
            )
        ]
    return f"undeclared labels from {where}", [
        Reason(
            "undeclared_labels",
            "hard_fail",
            f"the labels ({where}) are neither the catalogue's consensus nor a label set "
            "it declares: not gate evidence; the kappa and reasons are exploratory",
            "adr-0030",
        )
    ]


@dataclass(frozen=True)
class LabelHistory:
    """What git says about the catalogue's label files (:func:`label_history`).

    ``in_git`` False: no checkout (or no git), nothing else is known. ``committed_at``:
    the committer date of the last commit touching ``labels/`` (None: never committed).
    ``uncommitted``: label files that differ from HEAD or are not tracked.
    """

    in_git: bool
    committed_at: str | None = None
    uncommitted: tuple[str, ...] = ()


def label_history(catalogue: Catalogue) -> LabelHistory:
    """Ask git about ``catalogue``'s ``labels/`` folder (reads only; see heldout._git)."""
    from evalkit.heldout._git import git_anchor

    folder = Path(catalogue.root) / "labels"
    anchor = git_anchor(Path(catalogue.root))
    if anchor is None:
        return LabelHistory(in_git=False)
    return LabelHistory(
        in_git=True,
        committed_at=anchor.last_commit_time(folder),
        uncommitted=tuple(anchor.uncommitted(folder)),
    )


def _time(text: object) -> pd.Timestamp | None:
    try:
        t = pd.Timestamp(str(text))
    except (ValueError, TypeError):
        return None
    if pd.isna(t):
        return None
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def timing_reasons(history: LabelHistory, rows: pd.DataFrame) -> list[Reason]:
    """Reasons about when the labels were fixed relative to the judge's first answer in
    ``rows`` (the gated judge's rows on the split): none when they were committed before."""
    if not history.in_git:
        return [
            Reason(
                "labels_timing_unknown",
                "note",
                "the catalogue is not in a git checkout: whether the labels were committed "
                "before the judge answered cannot be told",
                "adr-0030",
            )
        ]
    if rows.empty or "created_at" not in rows.columns:
        return []
    times = [t for t in map(_time, rows["created_at"].dropna().unique()) if t is not None]
    if not times:
        return []
    first = min(times)
    if history.uncommitted:
        files = ", ".join(history.uncommitted[:3])
        return [
            Reason(
                "labels_after_answers",
                "hard_fail",
                f"label file(s) changed and not committed ({files}) while the judge's "
                f"answers exist (first {first.isoformat()}): labels must be committed before "
                "the judge runs; commit them and judge again into a new ledger",
                "adr-0030",
            )
        ]
    committed = _time(history.committed_at) if history.committed_at else None
    if committed is None:
        return [
            Reason(
                "labels_after_answers",
                "hard_fail",
                "the label files were never committed: labels must be committed before the "
                "judge runs",
                "adr-0030",
            )
        ]
    if committed > first:
        return [
            Reason(
                "labels_after_answers",
                "hard_fail",
                f"the labels were last committed at {committed.isoformat()}, after the judge's "
                f"first answer ({first.isoformat()}): labels may follow the answers; judge "
                "again into a new ledger",
                "adr-0030",
            )
        ]
    return []
