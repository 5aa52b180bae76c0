"""Held-out judge answers against the seal each names (ADR-0015).

A held-out request carries the id of the seal in force when it was planned (``seal_id``
in the ledger frame; the seal also enters the request key). The seal therefore binds
the row: a row naming seal S cannot have been judged before S was sealed, a row naming an
earlier seal than the one in force means the set was sealed again after the judge had
answered, and a row naming no seal, or a seal the registry does not hold, cannot be
placed at all.
"""

from __future__ import annotations

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.errors import SealError
from evalkit.heldout._chain import Seal, parse_time
from evalkit.heldout._registry import REGISTRY, read_registry
from evalkit.heldout._verify import assert_sealed


def _example(rows: pd.DataFrame) -> str:
    row = rows.iloc[0]
    key = str(row.get("request_key", ""))[:12]
    return f"case {row['case_id']}, request {key}, created_at {row.get('created_at')}"


def _count(rows: pd.DataFrame) -> int:
    return int(rows["request_key"].nunique()) if "request_key" in rows.columns else len(rows)


def assert_sealed_before(
    catalogue: Catalogue, ledger: pd.DataFrame, *, source: str = "the ledger"
) -> Seal:
    """Refuse held-out agreement unless every held-out row was judged under the seal in
    force, after it was sealed; return that seal.

    Checks, on the rows of ``ledger`` (a :func:`evalkit.judge.load_ledger` frame) whose
    case is held-out: the whole chain verifies and the latest seal covers the set
    (:func:`assert_sealed`); each row names a seal (``seal_id``); that seal is in the
    registry; it is the latest seal (an earlier one means the set was sealed again after
    judge answers were recorded); the row's ``created_at`` parses and is not before that
    seal's ``sealed_at`` (an edited ``created_at`` is caught here). A ledger without
    held-out rows passes (the gate then finds no answers). ``source`` names the ledger
    in messages.
    """
    seal = assert_sealed(catalogue)
    if ledger.empty or "case_id" not in ledger.columns:
        return seal
    ids = {c.id for c in catalogue.split("heldout")}
    rows = ledger[ledger["case_id"].isin(ids)]
    if rows.empty:
        return seal
    by_id = {s.id: s for s in read_registry(catalogue)}
    if "seal_id" in rows.columns:
        named = rows["seal_id"].astype(object)
        named = named.where(named.notna(), None)
    else:
        named = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    unsealed = rows[named.isna()]
    if len(unsealed):
        raise SealError(
            f"{source}: {_count(unsealed)} held-out answer(s) name no seal (e.g. "
            f"{_example(unsealed)}): judged before answers recorded their seal, or the seal "
            f"id was removed; judge the held-out split again under seal {seal.name}"
        )
    unknown = rows[~named.isin(list(by_id))]
    if len(unknown):
        sid = str(named[unknown.index[0]])
        raise SealError(
            f"{source}: {_count(unknown)} held-out answer(s) name seal {sid[:12]}…, which is "
            f"not in {catalogue.root / REGISTRY} (e.g. {_example(unknown)}): the seal was "
            "deleted from the chain, or the rows come from another registry"
        )
    older = rows[named != seal.id]
    if len(older):
        first = by_id[str(named[older.index[0]])]
        what = "the same held-out set" if first.sheet == seal.sheet else "the held-out set"
        raise SealError(
            f"{source}: {_count(older)} held-out answer(s) were judged under seal "
            f"{first.name} of {first.sealed_at} (e.g. {_example(older)}), but {what} was "
            f"sealed again as {seal.name} at {seal.sealed_at}: labels sealed after the "
            "judge answered may follow its answers (ADR-0015)"
        )
    if "created_at" not in rows.columns:
        raise SealError(f"{source}: the held-out answers carry no created_at")
    created = pd.to_datetime(rows["created_at"], utc=True, errors="coerce", format="ISO8601")
    unparsed = rows[created.isna()]
    if len(unparsed):
        raise SealError(
            f"{source}: {_count(unparsed)} held-out answer(s) have a created_at that is not "
            f"an ISO 8601 time (e.g. {_example(unparsed)})"
        )
    sealed_at = parse_time(seal.sealed_at)
    if sealed_at is None:  # unreachable: assert_sealed verified the chain
        raise SealError(f"seal {seal.name}: sealed_at {seal.sealed_at!r} is not a time")
    early = rows[created < pd.Timestamp(sealed_at)]
    if len(early):
        raise SealError(
            f"{source}: {_count(early)} held-out answer(s) name seal {seal.name}, sealed "
            f"{seal.sealed_at}, yet are dated before it (e.g. {_example(early)}): no answer "
            "can be judged under a seal that did not exist yet; the ledger's created_at was "
            "edited, or the seal was"
        )
    return seal
