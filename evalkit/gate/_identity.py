"""Who the judge was: the gate gates one named judge at one pinned model (ADR-0016).

A verdict is evidence about one judge. Rows from several judges in one ledger would let the
latest answer per case come from whichever judge happened to agree (cherry-picking); a
floating alias (``claude-sonnet-4-5``, ``...-latest``) names no fixed model, so what passed
today is not what runs tomorrow (the rule is :func:`evalkit.model_ids.is_pinned`, the one
the judge uses, ADR-0023); a ``response_model`` other than the model asked for means
the provider answered with another model; and the key-less baseline is a reference
heuristic, not a judge that may gate a launch. Each is a hard fail of every dimension
unless the user names the judge to gate, which sets the others' rows aside with a note.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit.errors import GateInputError
from evalkit.gate._verdict import Reason
from evalkit.model_ids import is_floating_alias

#: Backends that answer over the network and report which model produced the answer.
LIVE_BACKENDS = frozenset({"anthropic", "openai"})
#: Backends whose rows are references, never gate evidence.
REFERENCE_BACKENDS = frozenset({"baseline", "recorded"})
_IDENTITY = ("judge", "backend", "model", "response_model")


def judges_frame(ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct (judge, backend, model, response_model) with its row count."""
    if ledger.empty or "judge" not in ledger.columns:
        return pd.DataFrame(columns=[*_IDENTITY, "rows"])
    out = ledger.reindex(columns=list(_IDENTITY)).astype(object)
    out = out.where(out.notna(), None)
    grouped = out.groupby(list(_IDENTITY), dropna=False).size().rename("rows").reset_index()
    return grouped.sort_values("rows", ascending=False, ignore_index=True)


def select_judge(
    ledger: pd.DataFrame, judge_spec: str | None = None
) -> tuple[pd.DataFrame, list[Reason], dict[str, Any]]:
    """The rows of the one judge being gated, the reasons its identity raises, and who it is.

    With ``judge_spec`` the rows of that judge are kept and every other judge's rows are set
    aside with a note (a spec found in no row is a :class:`GateInputError`). Without it, a
    ledger holding more than one judge is a hard fail. Pure.
    """
    if ledger.empty or "judge" not in ledger.columns:
        return ledger, [], {}
    found = judges_frame(ledger)
    specs = sorted(map(str, ledger["judge"].dropna().unique()))
    reasons: list[Reason] = []
    if judge_spec is not None:
        if judge_spec not in specs:
            raise GateInputError(
                f"--judge-spec {judge_spec!r} is in no ledger row; judges found: {', '.join(specs)}"
            )
        others = ledger[ledger["judge"] != judge_spec]
        ledger = ledger[ledger["judge"] == judge_spec]
        if len(others):
            reasons.append(
                Reason(
                    "other_judges_set_aside",
                    "note",
                    f"{len(others)} row(s) of other judges set aside "
                    f"({', '.join(sorted(map(str, others['judge'].unique())))})",
                    "adr-0016",
                )
            )
    elif len(specs) > 1:
        counts = ", ".join(f"{r.judge} ({r.rows})" for r in found.itertuples())
        reasons.append(
            Reason(
                "mixed_judges",
                "hard_fail",
                f"the ledger holds answers from {len(specs)} judges ({counts}): the latest "
                "answer per case could come from any of them; name the one to gate with "
                "--judge-spec",
                "adr-0016",
            )
        )
    reasons += _identity_reasons(ledger)
    identity = _describe(ledger)
    return ledger, reasons, identity


def _identity_reasons(rows: pd.DataFrame) -> list[Reason]:
    reasons: list[Reason] = []
    pairs = judges_frame(rows)
    for r in pairs.itertuples():
        backend, model, answered = (None if pd.isna(v) else str(v) for v in r[2:5])
        who = f"{r.judge} (model {model!r})"
        if backend in REFERENCE_BACKENDS:
            what = (
                "the key-less reference heuristic"
                if backend == "baseline"
                else "a recorded answer file, not a judge that was called (ADR-0026)"
            )
            reasons.append(
                Reason(
                    "reference_judge",
                    "hard_fail",
                    f"{who} is {what}: it describes the catalogue, it is not a judge that "
                    "may gate a launch",
                    "adr-0016",
                )
            )
            continue
        if backend not in LIVE_BACKENDS:
            continue
        if is_floating_alias(backend, model):
            reasons.append(
                Reason(
                    "floating_alias",
                    "hard_fail",
                    f"{who} is a floating alias, not a pinned snapshot: the model that "
                    "passed is not the one that will run",
                    "adr-0016",
                )
            )
        if answered is None:
            reasons.append(
                Reason(
                    "unverified_model",
                    "hard_fail",
                    f"{r.rows} row(s) of {who} do not record which model answered",
                    "adr-0016",
                )
            )
        elif answered != model:
            reasons.append(
                Reason(
                    "response_model_mismatch",
                    "hard_fail",
                    f"{r.rows} row(s) of {who} were answered by {answered!r}",
                    "adr-0016",
                )
            )
    return reasons


def _describe(rows: pd.DataFrame) -> dict[str, Any]:
    frame = judges_frame(rows)
    if frame.empty:
        return {}
    if len(frame) == 1:
        row = frame.iloc[0]
        return {c: (None if pd.isna(row[c]) else str(row[c])) for c in _IDENTITY}
    return {"judges": frame.astype(object).where(frame.notna(), None).to_dict("records")}
