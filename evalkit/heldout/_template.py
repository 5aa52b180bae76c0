"""The blind labeling template and the filled label sheets it becomes.

The template shows a labeler only what a blind labeler may see: an opaque case id and
the conversation (with its sources). No stratum, no template family, no intended
answer, no judge output. One column per gated dimension, blank where a label is wanted
and ``n/a`` where the dimension does not apply (faithfulness on a case with no sources).
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

from evalkit._files import write_whole
from evalkit.catalogue import Case, Catalogue, Label
from evalkit.errors import Problem

NOT_APPLICABLE = "n/a"
LABELER_COLUMN = "labeler"
NOTE_COLUMN = "note"


def conversation_text(case: Case) -> str:
    """The conversation as a labeler reads it: numbered turns, then the sources."""
    lines = []
    for i, turn in enumerate(case.turns):
        who = "USER" if turn.role == "user" else "AGENT"
        marker = "  <- reply to label" if i == len(case.turns) - 1 else ""
        lines.append(f"[{i}] {who}: {turn.text.strip()}{marker}")
    for source in case.sources:
        lines.append(f"[source {source.id}] {source.title}: {' '.join(source.text.split())}")
    return "\n".join(lines)


def applies(case: Case, dimension: str) -> bool:
    """Whether a dimension is labelled on a case (faithfulness needs sources)."""
    return dimension != "faithfulness" or case.has_sources


def template_columns(catalogue: Catalogue) -> list[str]:
    return [
        "case_id",
        "conversation",
        *catalogue.constants.gated_dimensions,
        LABELER_COLUMN,
        NOTE_COLUMN,
    ]


def template_rows(
    catalogue: Catalogue, cases: Sequence[Case] | None = None
) -> list[dict[str, str]]:
    """Rows of the blind template, in an order unrelated to strata.

    Order is by sha256 of the case id, so it is stable across runs and carries no hint of
    how the set was written. ``cases`` defaults to the held-out split (another set, such
    as the cases ``evalkit prevalence plan`` chose, gets the same blind format).
    """
    chosen = catalogue.split("heldout") if cases is None else cases
    ordered = sorted(chosen, key=lambda c: hashlib.sha256(c.id.encode()).digest())
    rows = []
    for case in ordered:
        row = {"case_id": case.id, "conversation": conversation_text(case)}
        for dim in catalogue.constants.gated_dimensions:
            row[dim] = "" if applies(case, dim) else NOT_APPLICABLE
        row[LABELER_COLUMN] = ""
        row[NOTE_COLUMN] = ""
        rows.append(row)
    return rows


def template_csv(catalogue: Catalogue, cases: Sequence[Case] | None = None) -> str:
    """The template as CSV text (every field quoted, so it opens cleanly in a spreadsheet)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=template_columns(catalogue), quoting=csv.QUOTE_ALL, lineterminator="\r\n"
    )
    writer.writeheader()
    writer.writerows(template_rows(catalogue, cases))
    return buffer.getvalue()


def write_template(catalogue: Catalogue, out: str | Path) -> Path:
    """Write the blind template as UTF-8 with a byte-order mark (for spreadsheet apps),
    whole or not at all (:func:`~evalkit._files.write_whole`)."""
    return write_whole(out, template_csv(catalogue).encode("utf-8-sig"), "blind template")


def read_filled(path: str | Path, catalogue: Catalogue) -> tuple[list[Label], list[Problem]]:
    """Read a filled template into labels, listing every blank or invalid slot.

    Problems: a row with fewer or more fields than the header, unknown or duplicate case
    id, a held-out case missing from the sheet, a conversation that is not the case's
    (compared with whitespace collapsed, so a spreadsheet's line endings do not matter:
    the labels were given on another text), a blank slot, ``n/a`` where the dimension
    applies, a label where it does not, a value that is not a frozen bin, a blank labeler.
    No problem means every slot is filled.
    """
    path = Path(path)
    name = str(path)
    heldout = {c.id: c for c in catalogue.split("heldout")}
    bins = catalogue.constants.bins
    problems: list[Problem] = []
    labels: list[Label] = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(name, None, None, f"cannot read: {exc}")]
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing_cols = [c for c in template_columns(catalogue) if c not in (reader.fieldnames or [])]
    if missing_cols:
        return [], [Problem(name, "line 1", None, f"missing column(s) {missing_cols}")]
    n_fields = len(reader.fieldnames or [])
    seen: set[str] = set()
    for row in reader:
        extra = row.pop(None, None)
        if extra is not None or any(v is None for v in row.values()):
            found = sum(v is not None for v in row.values()) + len(extra or [])
            problems.append(
                Problem(
                    name,
                    f"line {reader.line_num}",
                    None,
                    f"{found} field(s), the header has {n_fields}: a cut or merged row",
                )
            )
            continue
        where = f"line {reader.line_num}, case {row['case_id']}"
        case = heldout.get(row["case_id"].strip())
        if case is None:
            problems.append(Problem(name, where, "case_id", "not a held-out case"))
            continue
        if case.id in seen:
            problems.append(Problem(name, where, "case_id", "case appears twice"))
            continue
        seen.add(case.id)
        if row["conversation"].split() != conversation_text(case).split():
            problems.append(
                Problem(
                    name,
                    where,
                    "conversation",
                    "not the case's conversation in the catalogue: labelled on another text; "
                    "label a fresh template",
                )
            )
        labeler = row[LABELER_COLUMN].strip()
        if not labeler:
            problems.append(Problem(name, where, LABELER_COLUMN, "blank labeler"))
        for dim in catalogue.constants.gated_dimensions:
            value = row[dim].strip()
            if not applies(case, dim):
                if value not in ("", NOT_APPLICABLE):
                    problems.append(Problem(name, where, dim, "labelled but does not apply"))
                continue
            if not value:
                problems.append(Problem(name, where, dim, "blank slot"))
            elif value == NOT_APPLICABLE:
                problems.append(Problem(name, where, dim, "n/a, but the dimension applies"))
            elif value not in bins:
                problems.append(Problem(name, where, dim, f"{value!r} is not one of {list(bins)}"))
            elif labeler:
                labels.append(
                    Label(
                        case_id=case.id,
                        dimension=dim,
                        bin=value,
                        labeler=labeler,
                        note=row[NOTE_COLUMN].strip() or None,
                    )
                )
    for case_id in sorted(set(heldout) - seen):
        problems.append(Problem(name, case_id, "case_id", "held-out case missing from the sheet"))
    return labels, problems
