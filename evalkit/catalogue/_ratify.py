"""Ratified constants: the committed record that the frozen constants in force were decided.

``catalogues/ratified.yaml`` lists every ratification: the identity of the constants
(:meth:`FrozenConstants.content_hash`, which covers the framing text too), the framing's
own hash, the ADR that decided them and when it was recorded. The constants in force
are *ratified* when their identity is that of the latest entry: an earlier entry records
a decision since superseded, so going back to it is a change that needs a decision too.
Anything else (an edited threshold, an edited framing, a removed dimension) is an
unratified change: the gate makes it a hard
fail (ADR-0013) until ``evalkit constants ratify --adr docs/adr/NNNN-....md`` records the
decision, so a change is always a recorded decision, never a quiet edit.

What this does not stop: someone with write access can ratify anything by naming an
ADR. It makes the change visible (a new ratification entry, an ADR file, a commit), and
every report and gate verdict names the ADR the constants rest on.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from evalkit._display import card
from evalkit.catalogue._collect import parse_yaml

RATIFIED_FILE = "ratified.yaml"
_ADR_ID = re.compile(r"(?:^|/)(\d{4})-[^/]*\.md$")

_HEADER = """\
# Ratified frozen constants (docs/adr/0013). Each entry records that the constants whose
# identity is `constants_sha256` (FrozenConstants.content_hash: constants and framing text)
# were decided by the ADR named. Written by `evalkit constants ratify --adr ...`; never edit
# by hand. The gate fails unless the constants in force match the latest entry.
"""


class Ratification(BaseModel):
    """One recorded decision that a set of frozen constants is in force."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    constants_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    framing_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    adr: str = Field(pattern=r"^ADR-\d{4}$")
    adr_file: str = Field(min_length=1)
    ratified_at: datetime


@dataclass(frozen=True)
class RatificationStatus:
    """Whether the constants in force are ratified, and by which ADR.

    ``record`` is the matching entry (None when unratified); ``last`` is the latest entry
    of the file, which an unratified change departs from; ``superseded`` is an earlier
    entry the constants match (a revert to a decision since replaced); ``catalogue`` is the
    folder as the user named it, for the ``--catalogue`` of the hint (``None``: no hint
    names a folder, so it reads for the default ``catalogues``).
    """

    ratified: bool
    constants_sha256: str
    record: Ratification | None
    last: Ratification | None
    superseded: Ratification | None = None
    catalogue: str | None = None

    @property
    def adr(self) -> str | None:
        return self.record.adr if self.record else None

    def __repr__(self) -> str:
        return f"RatificationStatus({self.reason()})"

    def _repr_html_(self) -> str:
        return card(
            "Frozen constants",
            self.reason(),
            verdict="RATIFIED" if self.ratified else "NOT RATIFIED",
            kind="pass" if self.ratified else "fail",
        )

    def reason(self) -> str:
        """One sentence for a gate reason or a report banner."""
        if self.ratified and self.record is not None:
            return f"constants ratified by {self.record.adr} ({self.record.adr_file})"
        since = f"changed since {self.last.adr}" if self.last else "no ratification recorded"
        where = f"is in no entry of {RATIFIED_FILE}"
        if self.superseded is not None and self.last is not None:
            where = f"is that of {self.superseded.adr}, superseded by {self.last.adr}"
        folder = f"--catalogue {shlex.quote(self.catalogue)} " if self.catalogue else ""
        return (
            f"constants not ratified: {since} (constants sha256 {self.constants_sha256[:12]} "
            f"{where}); record the decision with "
            f"`evalkit constants ratify {folder}--adr docs/adr/NNNN-....md`"
        )


def ratification_status(
    constants_sha256: str,
    ratifications: tuple[Ratification, ...],
    *,
    catalogue: str | None = None,
) -> RatificationStatus:
    """The status of constants with identity ``constants_sha256`` (pure): ratified only by
    the latest entry. ``catalogue`` (the folder as named) goes into the hint."""
    last = ratifications[-1] if ratifications else None
    if last is not None and last.constants_sha256 == constants_sha256:
        return RatificationStatus(True, constants_sha256, last, last, catalogue=catalogue)
    earlier = next(
        (r for r in reversed(ratifications) if r.constants_sha256 == constants_sha256), None
    )
    return RatificationStatus(
        False, constants_sha256, None, last, superseded=earlier, catalogue=catalogue
    )


def adr_id(path: Path) -> str:
    """``ADR-NNNN`` from an ADR file name ``NNNN-title.md``; ``ValueError`` otherwise."""
    found = _ADR_ID.search(path.as_posix())
    if not found:
        raise ValueError(f"{path}: an ADR file is named NNNN-title.md (docs/adr/)")
    return f"ADR-{found.group(1)}"


def append_ratification(
    root: Path,
    constants_sha256: str,
    framing_sha256: str,
    adr_path: Path,
    *,
    now: datetime | None = None,
) -> Ratification:
    """Append a ratification to ``root/ratified.yaml`` (the one write of this module).

    ``adr_path`` must be an existing markdown file named ``NNNN-title.md``; it is stored
    relative to the catalogue's parent when it lies below it.
    """
    if not adr_path.is_file():
        what = "a folder, not an ADR file" if adr_path.is_dir() else "no such ADR file"
        raise ValueError(f"{adr_path}: {what}")
    identifier = adr_id(adr_path)
    try:
        shown = adr_path.resolve().relative_to(root.resolve().parent).as_posix()
    except ValueError:
        shown = adr_path.as_posix()
    record = Ratification(
        constants_sha256=constants_sha256,
        framing_sha256=framing_sha256,
        adr=identifier,
        adr_file=shown,
        ratified_at=(now or datetime.now(UTC)).replace(microsecond=0),
    )
    path = root / RATIFIED_FILE
    entries: list[dict[str, object]] = []
    if path.exists():
        data = parse_yaml(path.read_text(encoding="utf-8")) or {}
        entries = list(data.get("ratifications", []))
    entries.append(record.model_dump(mode="json"))
    path.write_text(
        _HEADER + yaml.safe_dump({"ratifications": entries}, sort_keys=False), encoding="utf-8"
    )
    return record
