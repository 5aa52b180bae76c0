"""The ``replay`` judge: answers come from the ledger only. Key-less, network-less, $0.

Replay finds a request's answer by its *content key* (framing, constants, rubrics and
transcript; not the judge), so a ledger written by any judge can be replayed without
knowing its model or parameters. ``replay`` accepts the answer when exactly one judge
answered that content; ``replay:JUDGE`` (e.g. ``replay:anthropic:claude-sonnet-4-6``)
picks that judge's answers when the ledger holds several. If one judge answered the
same content more than once (other parameters), the latest non-error row is used.
The ledger stores judge specs scrubbed of secrets (:mod:`evalkit.secrets`), so the
judge named in ``replay:JUDGE`` is scrubbed the same way before it is compared:
``replay:openai:http://user:KEY@host/v1:m`` finds the rows that spec wrote.

A miss is a :class:`~evalkit.errors.LedgerError` naming, for the first misses, the
case id, the scored turn and each rubric's dimension, version and hash.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from evalkit.errors import LedgerError
from evalkit.judge._prompt import JudgeRequest
from evalkit.secrets import scrub

REPLAY_MODEL = "replay"


class AnswersByContent(Protocol):
    """Where replay looks answers up: an :class:`evalkit.ledger.Ledger` (named here by
    what replay needs of it, so that this backend does not import the store)."""

    path: Path

    def by_content(self, content_keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]: ...


def replay_filter(spec: str) -> str | None:
    """The judge named in ``replay:JUDGE``, or None for bare ``replay``."""
    return spec.split(":", 1)[1] if ":" in spec else None


def _describe(req: JudgeRequest) -> str:
    rubrics = ", ".join(
        f"{d.dimension} {d.version} sha256:{d.rubric_hash[:12]}" for d in req.dimensions
    )
    return f"case {req.case_id} turn t{req.turn} ({rubrics})"


def resolve_replay(
    ledger: AnswersByContent, requests: Sequence[JudgeRequest], judge: str | None = None
) -> list[str]:
    """The ledger request key answering each request, in order; LedgerError on a miss."""
    judge = scrub(judge) if judge is not None else None
    found = ledger.by_content([r.content_key for r in requests])
    keys: list[str] = []
    misses: list[str] = []
    for req in requests:
        rows = found.get(req.content_key, [])
        if judge is not None:
            rows = [r for r in rows if r["judge"] == judge]
        judges = sorted({r["judge"] for r in rows})
        if not rows:
            misses.append(_describe(req))
            continue
        if len(judges) > 1:
            raise LedgerError(
                f"{ledger.path}: {_describe(req)} was answered by several judges "
                f"({', '.join(judges)}); name one with --judge replay:JUDGE"
            )
        rows.sort(key=lambda r: (r["status"] != "error", r["created_at"]))
        keys.append(rows[-1]["request_key"])
    if misses:
        shown = "\n  - ".join(misses[:10])
        more = f"\n  ... and {len(misses) - 10} more" if len(misses) > 10 else ""
        who = f" from judge {judge}" if judge else ""
        raise LedgerError(
            f"{ledger.path}: replay found no answer{who} for {len(misses)} request(s):"
            f"\n  - {shown}{more}"
        )
    return keys
