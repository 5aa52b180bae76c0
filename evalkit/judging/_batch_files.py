"""Batch files out and in: hand a run to a provider's batch API or to vLLM, take it back.

Prevalence on a production pool means judging 10^5 to 10^6 conversations. evalkit does
not grow a distributed runner: it writes the requests a run would send as a standard
batch input file, and reads the engine's output file back through the same strict answer
parser as a live call (ADR-0026).

Formats (one JSON object per line):

* ``anthropic`` (Message Batches): input ``{"custom_id", "params"}`` with the Messages
  API body; output ``{"custom_id", "result": {"type": "succeeded", "message": {...}}}``
  or ``{"type": "errored", "error": {...}}`` / ``canceled`` / ``expired``.
* ``openai`` (OpenAI Batch API, and vLLM's ``run_batch``): input ``{"custom_id",
  "method": "POST", "url": "/v1/chat/completions", "body"}``; output ``{"id",
  "custom_id", "response": {"status_code", "request_id", "body"} | null, "error": {...}
  | null}``.

``custom_id`` is the request key. An export holds only the requests the ledger lacks a
final answer for (so an errored line is exported again by the next run) and sends
nothing. An import reads the whole file first and refuses it (a
:class:`BatchFileError`, exit 2, nothing written) when any line is malformed JSON, not an
object of its format, names an unknown or repeated ``custom_id``, carries a body for
another model than the judge's, or answers a request the ledger already holds with
another answer. Otherwise every line becomes a ledger row exactly as a live answer does:
``ok``, ``unparseable`` (counted, never a guessed bin), ``refused`` or ``error``. The
judge's identity is the spec's; the model that answered is the one the output names.
A line that repeats what the ledger already holds is counted and skipped, so importing
the same file twice records nothing twice.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evalkit.catalogue import Case, Catalogue
from evalkit.errors import JudgeError
from evalkit.judge._answer import AnswerError, loads_strict
from evalkit.judge._backends import make_backend
from evalkit.judge._base import Reply
from evalkit.judge._prompt import JudgeIdentity, JudgeParams, JudgeRequest
from evalkit.judge._requests import Turns, build_requests, dimensions_to_judge
from evalkit.judging._batch_lines import BatchFileError, _read_lines, _reply_for
from evalkit.judging._plan import _require_sealed
from evalkit.judging._send import _resolve
from evalkit.ledger._records import FINAL_STATUSES
from evalkit.ledger._store import Ledger

BatchFormat = Literal["anthropic", "openai"]
FORMATS: tuple[str, ...] = ("anthropic", "openai")
_OPENAI_URL = "/v1/chat/completions"


@dataclass(frozen=True)
class ImportCounts:
    """What an import did: rows recorded by status, lines already in the ledger."""

    recorded: dict[str, int]
    already: int

    def __str__(self) -> str:
        parts = [f"{n} {s}" for s, n in sorted(self.recorded.items())]
        return f"recorded {', '.join(parts) or 'nothing'}; {self.already} already in the ledger"


def _planned(
    catalogue: Catalogue,
    cases: Sequence[Case],
    dimensions: Sequence[str] | None,
    judge: str,
    ledger: Ledger,
    *,
    rubric_versions: dict[str, str] | None,
    turns: Turns,
    together: bool,
    params: JudgeParams | None,
    samples: int = 1,
) -> tuple[Any, list[JudgeRequest]]:
    backend = make_backend(judge, catalogue, params=params)
    if backend is None or backend.kind not in ("anthropic", "openai", "recorded"):
        raise JudgeError(
            f"batch files need an anthropic:, openai: or recorded: judge, not {judge!r}"
        )
    identity = JudgeIdentity(backend.spec, backend.kind, backend.model, backend.params)
    seal = _require_sealed(catalogue) if any(c.split == "heldout" for c in cases) else None
    requests = build_requests(
        catalogue,
        cases,
        dimensions_to_judge(catalogue, dimensions, rubric_versions),
        identity,
        ledger.salt,
        rubric_versions=rubric_versions,
        turns=turns,
        together=together,
        seal=seal,
        samples=samples,
    )
    return backend, requests


def _format_of(backend: Any) -> BatchFormat:
    return "openai" if backend.kind == "openai" else "anthropic"


def export_batch(
    catalogue: Catalogue,
    cases: Sequence[Case],
    dimensions: Sequence[str] | None,
    *,
    judge: str,
    ledger: str | Path,
    path: str | Path,
    batch_format: BatchFormat,
    rubric_versions: dict[str, str] | None = None,
    turns: Turns = "final",
    together: bool = True,
    params: JudgeParams | None = None,
    samples: int = 1,
) -> int:
    """Write the requests of this run that ``ledger`` holds no final answer for to
    ``path`` as a ``batch_format`` input file; return how many. Sends nothing.

    The format must be the judge's (``openai`` for ``openai:URL:MODEL``, ``anthropic``
    for ``anthropic:`` and ``recorded:``): a request is only answerable in the API it
    was built for. The file is written whole or not at all.
    """
    with Ledger(ledger) as led:
        backend, requests = _planned(
            catalogue, cases, dimensions, judge, led, rubric_versions=rubric_versions,
            turns=turns, together=together, params=params, samples=samples,
        )  # fmt: skip
        return write_requests(requests, backend, led, path, batch_format)


def write_requests(
    requests: Sequence[JudgeRequest],
    backend: Any,
    ledger: Ledger,
    path: str | Path,
    batch_format: BatchFormat,
) -> int:
    """Write those of ``requests`` that ``ledger`` holds no final answer for to ``path``
    in ``batch_format`` (the backend's own); return how many. Sends nothing."""
    if batch_format != _format_of(backend):
        raise JudgeError(
            f"--batch-format {batch_format} does not fit {backend.spec}: use "
            f"--batch-format {_format_of(backend)}"
        )
    statuses = ledger.statuses(r.key for r in requests)
    todo = [r for r in requests if statuses.get(r.key) not in FINAL_STATUSES]
    lines = []
    for req in todo:
        if batch_format == "anthropic":
            lines.append({"custom_id": req.key, "params": backend.message_params(req)})
        else:
            lines.append(
                {
                    "custom_id": req.key,
                    "method": "POST",
                    "url": _OPENAI_URL,
                    "body": backend.body(req),
                }
            )
    _write_atomic(Path(path), "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    return len(todo)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def import_batch(
    catalogue: Catalogue,
    cases: Sequence[Case],
    dimensions: Sequence[str] | None,
    *,
    judge: str,
    ledger: str | Path,
    path: str | Path,
    rubric_versions: dict[str, str] | None = None,
    turns: Turns = "final",
    together: bool = True,
    params: JudgeParams | None = None,
    samples: int = 1,
) -> ImportCounts:
    """Record the answers of a batch output file (see the module docstring).

    The lines must answer requests of this run (same catalogue, cases, dimensions,
    rubric versions, turns and judge as the export). :class:`BatchFileError` lists every
    problem and records nothing.
    """
    with Ledger(ledger) as led:
        backend, requests = _planned(
            catalogue, cases, dimensions, judge, led, rubric_versions=rubric_versions,
            turns=turns, together=together, params=params, samples=samples,
        )  # fmt: skip
        return record_output(requests, backend, led, path)


def record_output(
    requests: Sequence[JudgeRequest], backend: Any, ledger: Ledger, path: str | Path
) -> ImportCounts:
    """Record the batch output file ``path`` whose lines answer ``requests`` (see the
    module docstring); :class:`BatchFileError` lists every problem and records nothing."""
    path = Path(path)
    lines = _read_lines(path)
    by_key = {r.key: r for r in requests}
    problems: list[tuple[int | None, str, str]] = []
    seen: dict[str, int] = {}
    replies: list[tuple[JudgeRequest, Reply]] = []
    for number, text in lines:
        try:
            item = loads_strict(text)
        except (AnswerError, RecursionError) as exc:
            problems.append((number, "", f"malformed JSON: {exc}"))
            continue
        if not isinstance(item, dict):
            problems.append((number, "", "not a JSON object"))
            continue
        cid = item.get("custom_id")
        if type(cid) is not str:
            problems.append((number, "custom_id", "missing or not a string"))
            continue
        if cid in seen:
            problems.append((number, "custom_id", f"{cid[:16]}… again (line {seen[cid]})"))
            continue
        seen[cid] = number
        if cid not in by_key:
            problems.append(
                (number, "custom_id", f"{cid[:16]}… is no request of this run ({backend.spec})")
            )
            continue
        reply = _reply_for(backend, item, number, problems)
        if reply is not None:
            replies.append((by_key[cid], reply))
    if problems:
        unknown = sum("is no request of this run" in m for _, _, m in problems)
        if unknown and unknown == len(lines):
            problems.insert(
                0,
                (None, "", "no line answers a request of this run: the file answers another "
                 "catalogue, rubric version, split or judge (every request key changes with "
                 "them), or other options than the export's"),
            )  # fmt: skip
        raise BatchFileError(path, problems)
    records = _run_sync(_resolve_all(backend, replies))
    held = {r["request_key"]: r for r in ledger.records([r["request_key"] for r in records])}
    already = 0
    fresh = []
    for rec in records:
        old = held.get(rec["request_key"])
        if old is None or old["status"] == "error":
            fresh.append(rec)
        elif _same_answer(old, rec):
            already += 1
        else:
            problems.append(
                (seen[rec["request_key"]], "custom_id",
                 f"the ledger already holds another answer ({old['status']}) for this "
                 "request; import into a new ledger to compare them")
            )  # fmt: skip
    if problems:
        raise BatchFileError(path, problems)
    ledger.record_all(fresh)
    counts: dict[str, int] = {}
    for rec in fresh:
        counts[rec["status"]] = counts.get(rec["status"], 0) + 1
    return ImportCounts(counts, already)


async def _resolve_all(
    backend: Any, replies: Sequence[tuple[JudgeRequest, Reply]]
) -> list[dict[str, Any]]:
    return [await _resolve(backend, req.metadata(), None, reply, 0) for req, reply in replies]


def _run_sync(coro: Any) -> Any:
    """``asyncio.run`` that also works under a running loop (Jupyter): in a thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _same_answer(old: dict[str, Any], new: dict[str, Any]) -> bool:
    def key(rec: dict[str, Any]) -> Any:
        return (
            rec["status"],
            sorted((r["dimension"], r["bin"], r["rationale"]) for r in rec.get("results") or []),
        )

    return bool(key(old) == key(new))
