"""Which ledger rows a gate may read: the hashes in force, and rows produced under others.

A ledger row carries the framing, constants and rubric hashes it was produced under. The
gate reads only rows matching the hashes in force; rows of another study's rubric are set
aside with a note, and a case scored only under other constants is a hard fail (ADR-0005).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue, FrozenConstants
from evalkit.gate._verdict import Reason


def expected_hashes(source: Catalogue | FrozenConstants) -> dict[str, Any]:
    """The hashes a row must carry to be gated: constants, framing and (with a catalogue)
    the rubric in force of each gated dimension."""
    if isinstance(source, Catalogue):
        constants = source.constants
        rubrics = {
            d: source.rubric(d).content_hash(constants.bins) for d in constants.gated_dimensions
        }
    else:
        constants, rubrics = source, {}
    return {
        "constants_hash": constants.content_hash(),
        "framing_hash": constants.framing_hash,
        "rubric_hashes": rubrics,
    }


def matching_rows(rows: pd.DataFrame, dim: str, expected: dict[str, Any]) -> pd.Series:
    """Which ledger rows were produced under the framing, constants and rubric in force."""
    ok = pd.Series(True, index=rows.index)
    for col in ("constants_hash", "framing_hash"):
        if col in rows.columns:
            ok &= rows[col] == expected[col]
    want = expected["rubric_hashes"].get(dim)
    if want is not None and "rubric_hash" in rows.columns:
        ok &= rows["rubric_hash"] == want
    return ok


def foreign_reasons(rows: pd.DataFrame, matching: pd.Series, dim: str) -> list[Reason]:
    """Rows under other constants: a hard fail where they stand in for missing answers.

    A ledger may serve several studies (rubric v1 against v2, per-turn judging), so rows
    under another rubric are set aside and said so. It is a hard fail when a case was
    scored only under other constants (the ledger was produced for another gate), or,
    when the rubric in force is unknown, when the rows disagree on the rubric.
    """
    reasons = []
    foreign = rows[~matching]
    only_foreign = set(foreign["case_id"]) - set(rows[matching]["case_id"])
    if only_foreign:
        reasons.append(
            Reason(
                "foreign_ledger",
                "hard_fail",
                f"{len(only_foreign)} case(s) were scored only under a framing, rubric or "
                f"constants other than the ones being gated (e.g. "
                f"{', '.join(sorted(map(str, only_foreign))[:3])})",
                "adr-0005",
            )
        )
    elif len(foreign):
        reasons.append(
            Reason(
                "foreign_rows_set_aside",
                "note",
                f"{len(foreign)} ledger row(s) under another rubric, framing or constants "
                "(another study's) were set aside",
                "adr-0003",
            )
        )
    if "rubric_hash" in rows.columns and rows[matching]["rubric_hash"].nunique() > 1:
        reasons.append(
            Reason("foreign_ledger", "hard_fail", "rows under more than one rubric", "adr-0005")
        )
    return reasons
