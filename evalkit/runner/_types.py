"""What runners, targets and user sides exchange: messages, replies, errors, records."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict

from evalkit.catalogue import Case
from evalkit.errors import EvalkitError

Role = Literal["user", "assistant"]


class Message(TypedDict):
    """One message of the conversation as a target sees it (no system message here)."""

    role: Role
    content: str


#: Columns of a transcript record, one record per turn (see :mod:`evalkit.runner._store`).
TRANSCRIPT_COLUMNS = (
    "conversation",
    "attempt",
    "case_id",
    "turn",
    "role",
    "text",
    "signal",
    "target",
    "user",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "error",
    "created_at",
)


class RunnerError(EvalkitError):
    """A run cannot start as asked (bad target spec, missing API key, bad store)."""


class TargetCallError(Exception):
    """One call to a target or simulated user failed after the retry policy.

    The runner records ``message`` (already scrubbed of secrets) on the turn and
    leaves the conversation unfinished, so the next run retries it.
    """

    def __init__(self, message: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts


@dataclass(frozen=True)
class TargetReply:
    """A target's reply: its text and, when the target reports them, token counts."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class TurnContext:
    """Where a call happens: the case being run and the index of the turn to produce."""

    case: Case
    turn: int


class Target(Protocol):
    """Anything that maps the messages so far to the agent's next reply.

    ``spec`` names the target in transcripts (e.g. ``anthropic:claude-sonnet-4-6``; never
    a secret). ``fingerprint`` changes whenever anything that changes replies changes
    (model, system prompt, parameters); a stored conversation is reused only under the
    same fingerprint. ``reply`` raises :class:`TargetCallError` for a failed call.
    """

    spec: str

    @property
    def fingerprint(self) -> str: ...

    async def reply(self, messages: Sequence[Message], context: TurnContext) -> TargetReply: ...

    async def aclose(self) -> None: ...


def fingerprint_of(doc: dict[str, Any]) -> str:
    """First 16 hex digits of the sha256 of ``doc``'s canonical JSON."""
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
