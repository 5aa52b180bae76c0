"""The seal registry as a hash chain: one entry per seal, each committing to the one before.

An entry's ``hash`` is the sha256 of the canonical JSON (sorted keys, no spaces, UTF-8) of
every other field of the entry, ``prev`` included; the first entry's ``prev`` is
:data:`GENESIS`. So editing any field of an entry changes its hash, which then no longer
matches the entry's recorded ``hash`` nor the next entry's ``prev``; deleting, inserting or
reordering entries breaks ``index`` and ``prev``; and ``sealed_at`` must not decrease along
the chain nor lie in the future (beyond :data:`CLOCK_SKEW`). What a chain cannot show by
itself is a consistent rewrite of every entry from some point on, or the removal of the
newest entries: the git anchor and the ledger rows are there for that (ADR-0015).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: ``prev`` of the first entry.
GENESIS = "0" * 64
#: How far in the future a ``sealed_at`` may lie before it counts as forged (clock drift
#: between the machine that sealed and the one that verifies).
CLOCK_SKEW = timedelta(minutes=5)
#: ``git_commit`` of a seal made outside a git checkout.
NO_COMMIT = "none"

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Seal(BaseModel):
    """One entry of the chain: a filled held-out sheet sealed with what it was labelled on.

    ``files`` maps each sealed file (path relative to the catalogue folder, ``/``
    separated) to its sha256: the filled sheet ``file``, the blind template and every
    held-out case file. ``sheet`` identifies the held-out set (the sha256 of its sorted
    case ids), so two seals of the same set can be told apart from seals of another.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    index: int = Field(ge=0)
    """Position in the chain, from 0."""
    prev: Sha256
    """``hash`` of the entry before, :data:`GENESIS` for the first."""
    sealed_at: str
    """When it was sealed: ISO 8601 with a UTC offset."""
    git_commit: str
    """HEAD when sealed, holding every sealed file; :data:`NO_COMMIT` outside git."""
    sheet: Sha256
    file: str
    """The filled sheet, relative to the catalogue folder."""
    files: dict[str, Sha256]
    n_labels: int = Field(ge=0)
    n_cases: int = Field(ge=0)
    hash: Sha256
    """sha256 of the canonical JSON of every other field: the seal's id."""

    @model_validator(mode="after")
    def _sheet_is_sealed(self) -> Seal:
        if self.file not in self.files:
            raise ValueError(f"files: the sealed sheet {self.file!r} is not among them")
        for rel in self.files:
            parts = rel.split("/")
            if rel.startswith("/") or "\\" in rel or ".." in parts or "" in parts:
                raise ValueError(
                    f"files: {rel!r} is not a path inside the catalogue (relative, "
                    "'/'-separated, no '..')"
                )
        return self

    @property
    def id(self) -> str:
        """The seal's id, as ledger rows name it: its ``hash``."""
        return self.hash

    @property
    def sha256(self) -> str:
        """sha256 of the filled sheet."""
        return self.files[self.file]

    @property
    def name(self) -> str:
        """``#index (first 12 hex digits of the id)``, as messages name a seal."""
        return f"#{self.index} ({self.hash[:12]})"


def entry_hash(fields: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``fields`` without ``hash``."""
    body = {k: v for k, v in fields.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def next_entry(chain: Sequence[Seal], **fields: Any) -> Seal:
    """The entry that extends ``chain`` with ``fields`` (``index``, ``prev``, ``hash`` set)."""
    body = {"index": len(chain), "prev": chain[-1].hash if chain else GENESIS, **fields}
    return Seal(**body, hash=entry_hash(body))


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time with a UTC offset, in UTC; None if unparseable or naive."""
    try:
        when = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return when.astimezone(UTC) if when.tzinfo is not None else None


def chain_breaks(chain: Sequence[Seal], now: datetime) -> dict[int, list[str]]:
    """What is wrong with each entry's place in the chain, by index (no key: intact).

    Checked per entry: its ``index`` is its position; its ``prev`` is the previous entry's
    ``hash`` (:data:`GENESIS` for the first); its fields still hash to its ``hash``; its
    ``sealed_at`` parses, is not before the previous entry's and not after
    ``now + CLOCK_SKEW``. Files are not read here. Pure.
    """
    breaks: dict[int, list[str]] = {}
    before: datetime | None = None
    for i, seal in enumerate(chain):
        problems = []
        if seal.index != i:
            problems.append(
                f"index {seal.index} at position {i}: an entry was deleted, inserted or moved"
            )
        want = chain[i - 1].hash if i else GENESIS
        if seal.prev != want:
            link = f"seal #{i - 1}" if i else "the genesis value"
            problems.append(
                f"prev {seal.prev[:12]}… does not link to {link} ({want[:12]}…): an entry "
                "before it was deleted, edited or reordered"
            )
        if entry_hash(seal.model_dump()) != seal.hash:
            problems.append(
                "its fields no longer hash to its recorded hash: the entry was edited after sealing"
            )
        when = parse_time(seal.sealed_at)
        if when is None:
            problems.append(f"sealed_at {seal.sealed_at!r} is not an ISO 8601 time with offset")
        elif when > now + CLOCK_SKEW:
            problems.append(f"sealed_at {seal.sealed_at} lies in the future")
        elif before is not None and when < before:
            problems.append(f"sealed_at {seal.sealed_at} precedes that of seal #{i - 1}: backdated")
        before = when or before
        if problems:
            breaks[i] = problems
    return breaks
