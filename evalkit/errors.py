"""The small exception hierarchy of evalkit.

Every error names where the problem is (file, record, field) and what is wrong,
so that a researcher can fix the input without reading the code.
"""

from __future__ import annotations

from dataclasses import dataclass


class EvalkitError(Exception):
    """Base class for every error evalkit raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where it is and what is wrong."""

    file: str
    record: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.record is not None:
            where += f" [{self.record}]"
        if self.field is not None:
            where += f" {self.field}"
        return f"{where}: {self.message}"


class CatalogueError(EvalkitError):
    """The catalogue has one or more problems; all of them are listed.

    Nothing is loaded when this is raised: a catalogue is valid whole or not at all.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        lines = [f"{len(self.problems)} problem(s) in the catalogue:"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class LedgerError(EvalkitError):
    """The judge ledger is missing a row, is corrupt, or belongs to other constants."""


class JudgeError(EvalkitError):
    """A judge backend cannot run as asked (bad spec, missing key, over budget)."""


class SealError(EvalkitError):
    """Held-out labels are unsealed, changed since sealing, or sealed too late."""


class GateInputError(EvalkitError):
    """The gate cannot be computed from its inputs (exit code 2 in the CLI)."""
