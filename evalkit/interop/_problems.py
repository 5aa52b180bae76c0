"""The errors of the interop adapters: every problem names its file, record and field."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.errors import EvalkitError, Problem

#: Problems listed in one error message (the count of the others is given).
MAX_SHOWN = 20


class ImportProblems(EvalkitError):
    """An input from another tool (an Inspect log, a mapping file, a Label Studio export,
    a long CSV) has problems; all of them are listed and nothing is written."""

    def __init__(self, what: str, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        lines = [f"{len(self.problems)} problem(s) in {what}, nothing written:"]
        lines += [f"  - {p}" for p in self.problems[:MAX_SHOWN]]
        if len(self.problems) > MAX_SHOWN:
            lines.append(f"  ... and {len(self.problems) - MAX_SHOWN} more")
        super().__init__("\n".join(lines))


class InspectNotInstalled(EvalkitError):
    """Reading Inspect AI logs needs the optional extra ``evalkit[inspect]``."""

    def __init__(self) -> None:
        super().__init__(
            "reading Inspect AI logs needs the inspect_ai package: pip install 'evalkit[inspect]'"
        )
