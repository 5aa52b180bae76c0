"""Records from outside the ledger (a JSONL export) validated like a live answer.

A JSONL export is a file anyone can edit, and the gate believes what a ledger holds;
so an imported record must be one the live path could have written. Every line is
checked, and :func:`read_jsonl` raises one :class:`~evalkit.errors.LedgerError` listing
the problems (file, line, field) or returns every record: an import is all or nothing.

The rules, per record:

* a JSON object (no duplicate key, no NaN or Infinity) with exactly the fields
  :data:`~evalkit.ledger._records.REQUEST_FIELDS` plus ``results``;
* ``request_key``, ``content_key``, ``framing_hash``, ``constants_hash`` and each
  dimension's ``rubric_hash`` are 64 lowercase hex digits, ``nonce`` 16, and
  ``request_id`` is the first 8 of ``request_key``; no request key appears twice;
* ``case_id``, ``judge``, ``backend``, ``model`` and each dimension's name and
  version are non-empty strings, dimensions are distinct, ``presence_gated`` is a
  boolean, ``params`` an object, ``turn`` a non-negative integer;
* ``status`` is one of :data:`~evalkit.ledger._records.STATUSES`; ``attempts`` is at
  least 1; token counts are non-negative integers, ``cost_usd`` None or a
  non-negative number, ``latency_s`` a non-negative number, ``created_at`` an ISO
  8601 timestamp; ``raw_response``, ``problem``, ``error``, ``response_model`` and
  ``batch_id`` strings or None;
* an ``ok`` record's ``results`` pass :func:`~evalkit.judge._answer.parse_scores`
  exactly as the live answer did: one entry per requested dimension, each bin one of
  the frozen bins, booleans that are booleans, evidence among the turns shown
  (``t0`` to the scored turn), a non-blank rationale; any other status has no results.

With a catalogue, what can be derived from it must agree: bins are the catalogue's
frozen bins; and for a record under the catalogue's framing and constants hashes
whose case and rubric versions the catalogue holds, the request is rebuilt
(:func:`~evalkit.judge._prompt.build_request`) and ``rubric_hash``, ``content_key``
and (when ``params`` are the standard :class:`~evalkit.judge._prompt.JudgeParams`,
with or without the ``heldout_seal`` a held-out request is bound to) ``request_key``
must be the rebuilt ones, so an answer cannot be moved to another
case, turn or rubric. A record under other hashes, or of a case or rubric version the
catalogue does not hold, is foreign: the gate does not count it (its hashes are not
those in force) and its keys are not checked. Without a catalogue (reading an export
for analysis) any bin string is accepted; the gate checks bins against its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from evalkit.catalogue import Catalogue
from evalkit.errors import JudgeError, LedgerError, Problem
from evalkit.judge._answer import AnswerError, loads_strict, parse_scores
from evalkit.judge._prompt import JudgeIdentity, JudgeParams, build_request
from evalkit.ledger._records import REQUEST_FIELDS, STATUSES

#: Problems listed in one error (the count of the others is given).
MAX_SHOWN = 20

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")
_TURN_ID = re.compile(r"t(?:0|[1-9][0-9]{0,5})")
_DIM_KEYS = frozenset({"dimension", "version", "rubric_hash", "presence_gated"})
_PARAM_NAMES = frozenset(f.name for f in fields(JudgeParams))
#: Parameters a record may leave out: the repeat index is written only when not 0.
_OPTIONAL_PARAMS = frozenset({"sample"})
_FIELDS = frozenset((*REQUEST_FIELDS, "results"))

Check = Callable[[Any], str | None]


def _hex(pattern: re.Pattern[str], digits: int) -> Check:
    def check(v: Any) -> str | None:
        ok = type(v) is str and pattern.fullmatch(v)
        return None if ok else f"{v!r} is not {digits} lowercase hex digits"

    return check


def _text(v: Any) -> str | None:
    return None if type(v) is str and v.strip() else f"{v!r} is not a non-empty string"


def _text_or_none(v: Any) -> str | None:
    return None if v is None or type(v) is str else f"{v!r} is not a string or null"


def _count(minimum: int) -> Check:
    def check(v: Any) -> str | None:
        ok = type(v) is int and v >= minimum
        return None if ok else f"{v!r} is not an integer >= {minimum}"

    return check


def _amount(v: Any) -> str | None:
    ok = type(v) in (int, float) and math.isfinite(v) and v >= 0
    return None if ok else f"{v!r} is not a non-negative number"


def _timestamp(v: Any) -> str | None:
    try:
        datetime.fromisoformat(v)
    except (TypeError, ValueError):
        return f"{v!r} is not an ISO 8601 timestamp"
    return None


def _status(v: Any) -> str | None:
    return None if v in STATUSES and type(v) is str else f"{v!r} is not one of {list(STATUSES)}"


def _object(v: Any) -> str | None:
    return None if isinstance(v, dict) else f"{type(v).__name__} is not an object"


_CHECKS: dict[str, Check] = {
    "request_key": _hex(_HEX64, 64),
    "content_key": _hex(_HEX64, 64),
    "nonce": _hex(_HEX16, 16),
    "framing_hash": _hex(_HEX64, 64),
    "constants_hash": _hex(_HEX64, 64),
    "case_id": _text,
    "turn": _count(0),
    "judge": _text,
    "backend": _text,
    "model": _text,
    "params": _object,
    "status": _status,
    "attempts": _count(1),
    "raw_response": _text_or_none,
    "problem": _text_or_none,
    "error": _text_or_none,
    "input_tokens": _count(0),
    "output_tokens": _count(0),
    "cache_read_tokens": _count(0),
    "cache_creation_tokens": _count(0),
    "cost_usd": lambda v: None if v is None else _amount(v),
    "latency_s": _amount,
    "response_model": _text_or_none,
    "batch_id": _text_or_none,
    "created_at": _timestamp,
}


def _dimension_problems(dims: Any) -> list[tuple[str, str]]:
    if not isinstance(dims, list) or not dims:
        return [("dimensions", "is not a non-empty array")]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, d in enumerate(dims):
        where = f"dimensions[{i}]"
        if not isinstance(d, dict) or set(d) != _DIM_KEYS:
            keys = sorted(d) if isinstance(d, dict) else type(d).__name__
            out.append((where, f"has keys {keys}, expected {sorted(_DIM_KEYS)}"))
            continue
        for name, check in (("dimension", _text), ("version", _text)):
            if (msg := check(d[name])) is not None:
                out.append((f"{where}.{name}", msg))
        if (msg := _hex(_HEX64, 64)(d["rubric_hash"])) is not None:
            out.append((f"{where}.rubric_hash", msg))
        if type(d["presence_gated"]) is not bool:
            out.append((f"{where}.presence_gated", f"{d['presence_gated']!r} is not a boolean"))
        if d["dimension"] in seen:
            out.append((f"{where}.dimension", f"{d['dimension']!r} is requested twice"))
        seen.add(d["dimension"])
    return out


def _results_problems(rec: dict[str, Any], bins: Sequence[str] | None) -> list[tuple[str, str]]:
    results = rec["results"]
    if not isinstance(results, list):
        return [("results", "is not an array")]
    if rec["status"] != "ok":
        return [] if not results else [("results", f"a {rec['status']} request has no results")]
    dims = rec["dimensions"]
    entries = [r for r in results if isinstance(r, dict)]
    if bins is None:  # no catalogue: any bin string (the gate checks bins itself)
        bins = sorted({r["bin"] for r in entries if type(r.get("bin")) is str})
    # The turns shown are t0..t{turn}; only those the evidence names are listed.
    cited = {e for r in entries if isinstance(r.get("evidence_turns"), list)
             for e in r["evidence_turns"] if type(e) is str}  # fmt: skip
    shown = [e for e in cited if _TURN_ID.fullmatch(e) and int(e[1:]) <= rec["turn"]]
    try:
        parse_scores(
            {"scores": results},
            dimensions=[d["dimension"] for d in dims],
            bins=bins,
            turn_ids=shown,
            presence_gated={d["dimension"]: d["presence_gated"] for d in dims},
        )
    except AnswerError as exc:
        return [("results", str(exc).replace("scores[", "results["))]
    return []


def _catalogue_problems(
    rec: dict[str, Any], catalogue: Catalogue, hashes: tuple[str, str]
) -> list[tuple[str, str]]:
    """Rebuild the request from the catalogue where that is possible; compare keys."""
    if (rec["framing_hash"], rec["constants_hash"]) != hashes:
        return []  # foreign constants: not derivable here
    try:
        case = catalogue.case(rec["case_id"])
        rubrics = [catalogue.rubrics[(d["dimension"], d["version"])] for d in rec["dimensions"]]
    except KeyError:
        return []  # a case or rubric version this catalogue does not hold
    bins = catalogue.constants.bins
    out: list[tuple[str, str]] = []
    for i, (d, r) in enumerate(zip(rec["dimensions"], rubrics, strict=True)):
        if d["rubric_hash"] != r.content_hash(bins):
            out.append(
                (f"dimensions[{i}].rubric_hash", f"is not the hash of {r.dimension} {r.version}")
            )
    params = dict(rec["params"])
    seal = params.pop("heldout_seal", None)
    standard = (
        _PARAM_NAMES - _OPTIONAL_PARAMS <= set(params) <= _PARAM_NAMES
        and (seal is None or type(seal) is str)
        and (type(params.get("sample", 0)) is int and params.get("sample", 0) > 0
             if "sample" in params else True)
    )  # fmt: skip
    jp = JudgeParams(**(params if standard else _schema_only(params)))
    identity = JudgeIdentity(rec["judge"], rec["backend"], rec["model"], jp)
    try:
        req = build_request(
            catalogue,
            case,
            rec["turn"],
            rubrics,
            identity,
            b"",
            heldout_seal=seal if standard else None,
        )
    except JudgeError as exc:
        return [*out, ("turn", str(exc))]
    if rec["content_key"] != req.content_key:
        out.append(("content_key", "is not the key of this case, turn and rubrics"))
    elif standard and rec["request_key"] != req.key:
        out.append(("request_key", "is not the key of this request, backend, model and params"))
    return out


def _schema_only(params: dict[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in ("schema_version",) if k in params}


def record_problems(
    rec: Any, *, catalogue: Catalogue | None = None, hashes: tuple[str, str] | None = None
) -> list[tuple[str, str]]:
    """(field, message) for each rule ``rec`` breaks (see the module docstring).

    ``hashes`` are the catalogue's (framing, constants) hashes, computed once by the
    caller; by default from ``catalogue``.
    """
    if not isinstance(rec, dict):
        return [("record", f"a {type(rec).__name__}, not an object")]
    out = [(f, "is missing") for f in (*REQUEST_FIELDS, "results") if f not in rec]
    out += [(f, "is not a ledger field") for f in sorted(set(rec) - _FIELDS)]
    for name, check in _CHECKS.items():
        if name in rec and (msg := check(rec[name])) is not None:
            out.append((name, msg))
    if "dimensions" in rec:
        out += _dimension_problems(rec["dimensions"])
    if not out and rec["request_id"] != rec["request_key"][:8]:
        out.append(("request_id", f"{rec['request_id']!r} is not the request key's first 8"))
    if out:
        return out  # the checks below need well-formed fields
    bins = catalogue.constants.bins if catalogue is not None else None
    out += _results_problems(rec, bins)
    if catalogue is not None:
        hashes = hashes or (catalogue.framing_hash, catalogue.constants_hash)
        out += _catalogue_problems(rec, catalogue, hashes)
    return out


def read_jsonl(path: str | Path, *, catalogue: Catalogue | None = None) -> list[dict[str, Any]]:
    """Every record of a JSONL export, each validated (see the module docstring).

    Raises :class:`LedgerError` listing the problems (file, line, field), the first
    :data:`MAX_SHOWN` of them, if any line breaks a rule; blank lines are skipped.
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LedgerError(f"{p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise LedgerError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    hashes = (catalogue.framing_hash, catalogue.constants_hash) if catalogue else None
    out: list[dict[str, Any]] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            rec = loads_strict(line)
        except AnswerError as exc:
            problems.append(Problem(str(p), where, None, f"not a JSON record ({exc})"))
            continue
        found = record_problems(rec, catalogue=catalogue, hashes=hashes)
        problems += [Problem(str(p), where, field, msg) for field, msg in found]
        if found:
            continue
        key = rec["request_key"]
        if key in first_line:
            problems.append(
                Problem(str(p), where, "request_key", f"already on line {first_line[key]}")
            )
            continue
        first_line[key] = n
        out.append(rec)
    if problems:
        shown = "\n  - ".join(str(x) for x in problems[:MAX_SHOWN])
        more = len(problems) - MAX_SHOWN
        tail = f"\n  ... and {more} more" if more > 0 else ""
        raise LedgerError(f"{p}: {len(problems)} problem(s), nothing read:\n  - {shown}{tail}")
    return out
