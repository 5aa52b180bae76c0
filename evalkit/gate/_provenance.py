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


def stale_requests(ledger: pd.DataFrame, catalogue: Catalogue) -> set[str]:
    """Request keys whose answers describe a conversation that has changed since.

    A request's content key hashes what the judge read: the case's turns up to the scored
    one, its sources and locale, the rubrics, framing and constants (ADR-0003). For every
    request produced under the framing and constants in force and the rubric texts the
    catalogue holds, the key is rebuilt from the catalogue as it is now; a different key
    (a reply rewritten, a turn added before the scored one, a source edited), a case the
    catalogue no longer holds or a turn that is no longer an assistant turn makes the
    request stale (issue #30: a verdict computed from answers about rewritten replies).

    Undecidable rows are left to the other checks: rows without a ``content_key`` (a
    hand-built frame; every ledger frame carries it), rows under other framing or
    constants, and rows whose rubric version is gone or was edited in place (their rubric
    hash differs, which :func:`matching_rows` sets aside).
    """
    if ledger.empty or "content_key" not in ledger.columns:
        return set()
    rows = ledger[
        ledger["content_key"].notna()
        & (ledger["framing_hash"] == catalogue.framing_hash)
        & (ledger["constants_hash"] == catalogue.constants_hash)
    ]
    names = ("request_key", "case_id", "turn", "dimension", "rubric_version", "rubric_hash")
    requests: dict[str, tuple[str, int, list[tuple[str, str, str]], Any, Any]] = {}
    columns = (rows[c].to_numpy() for c in (*names, "schema_version", "content_key"))
    for key, case_id, turn, dim, version, rubric_hash, schema, stored in zip(*columns, strict=True):
        entry = requests.setdefault(str(key), (str(case_id), int(turn), [], schema, stored))
        entry[2].append((str(dim), str(version), str(rubric_hash)))
    rebuild = _ContentKeys(catalogue)
    stale = set()
    for key, (case_id, turn, asked, schema, stored) in requests.items():
        want = rebuild(case_id, turn, tuple(asked), schema)
        if want is not None and want != stored:
            stale.add(key)
    return stale


class _ContentKeys:
    """Content keys rebuilt from the catalogue as it is now, each computed once."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self.keys: dict[tuple[Any, ...], str | None] = {}
        self.hashes: dict[tuple[str, str], str | None] = {}
        self.systems: dict[tuple[str, ...], str] = {}

    def _rubric_hash(self, dim: str, version: str) -> str | None:
        if (dim, version) not in self.hashes:
            rubric = self.catalogue.rubrics.get((dim, version))
            bins = self.catalogue.constants.bins
            self.hashes[(dim, version)] = rubric.content_hash(bins) if rubric else None
        return self.hashes[(dim, version)]

    def __call__(
        self, case_id: str, turn: int, asked: tuple[tuple[str, str, str], ...], schema: Any
    ) -> str | None:
        """The key now; "" when the case or turn is gone; None when a rubric asked for
        is not the text the catalogue holds under that version (undecidable)."""
        from evalkit.errors import JudgeError
        from evalkit.judge._prompt import SCHEMA_VERSION, content_key

        sig = (case_id, turn, asked, schema)
        if sig in self.keys:
            return self.keys[sig]
        if any(self._rubric_hash(d, v) != h for d, v, h in asked):
            self.keys[sig] = None
            return None
        rubrics = [self.catalogue.rubrics[(d, v)] for d, v, _ in asked]
        try:
            key = content_key(
                self.catalogue,
                self.catalogue.case(case_id),
                turn,
                rubrics,
                str(schema) if isinstance(schema, str) and schema else SCHEMA_VERSION,
                systems=self.systems,
                rubric_hashes=tuple(h for _, _, h in asked),
            )
        except (KeyError, JudgeError):
            key = ""
        self.keys[sig] = key
        return key


def stale_reasons(rows: pd.DataFrame, stale: set[str]) -> list[Reason]:
    """Stale answers (:func:`stale_requests`) are set aside: a note when every case they
    answer also has a current answer, a hard fail when some case has only stale ones."""
    if not stale or rows.empty:
        return []
    is_stale = rows["request_key"].isin(stale)
    if not is_stale.any():
        return []
    only = sorted(set(rows[is_stale]["case_id"].astype(str)) - set(rows[~is_stale]["case_id"]))
    n = int(rows[is_stale]["request_key"].nunique())
    if only:
        return [
            Reason(
                "stale_answers",
                "hard_fail",
                f"{len(only)} case(s) were answered only about a conversation that has "
                f"changed since (a reply, turn or source edited; e.g. {', '.join(only[:3])}): "
                f"their {n} answer(s) are set aside; judge them again",
                "adr-0003",
            )
        ]
    return [
        Reason(
            "stale_rows_set_aside",
            "note",
            f"{n} answer(s) about an earlier text of cases judged again since were set aside",
            "adr-0003",
        )
    ]
