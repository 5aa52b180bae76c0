"""Planning a run: which requests, and what the ledger already holds.

A :class:`Plan` is computed before anything is sent (see
:func:`evalkit.judging._run.judge_cases`): the requests
(:func:`evalkit.judge._requests.build_requests`), how many the ledger already answers,
the ones to send and their estimated cost.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from evalkit.catalogue import Catalogue
from evalkit.errors import EvalkitError, JudgeError
from evalkit.judge._base import CostEstimate
from evalkit.judge._prompt import JudgeRequest


def _require_sealed(catalogue: Catalogue) -> str:
    """The id of the held-out seal in force; refuse to judge held-out cases without one.

    Delegates to ``evalkit.heldout.assert_sealed(catalogue)`` when that module exists;
    without it, or when it raises, this raises ``JudgeError("held-out labels are not
    sealed ...")``.
    """
    try:
        heldout = importlib.import_module("evalkit.heldout")
    except ModuleNotFoundError as exc:
        if exc.name not in ("evalkit.heldout", "evalkit"):
            raise
        raise JudgeError("held-out labels are not sealed (no seal registry installed)") from None
    check = getattr(heldout, "assert_sealed", None)
    if check is None:
        raise JudgeError("held-out labels are not sealed (evalkit.heldout has no assert_sealed)")
    try:
        return str(check(catalogue).id)
    except EvalkitError as exc:
        raise JudgeError(f"held-out labels are not sealed: {exc}") from exc


@dataclass
class Plan:
    """What a run will do, computed before anything is sent."""

    judge: str
    requests: list[JudgeRequest]
    in_ledger: int
    errors_to_retry: int
    to_send: list[JudgeRequest]
    pending_in_batches: int = 0
    estimate: CostEstimate | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"judge {self.judge}: {len(self.requests)} request(s); {self.in_ledger} already "
            f"in the ledger; {len(self.to_send)} to send ({self.errors_to_retry} earlier "
            f"error(s) retried); {self.pending_in_batches} awaited in open batch(es)",
        ]
        if self.estimate is not None and self.to_send:
            lines.append(self.estimate_line())
        return "\n".join(lines + self.notes)

    def estimate_line(self) -> str:
        """The estimate, saying whether it is a local approximation or a provider's count."""
        est = self.estimate
        if est is None:
            return "no cost estimate"
        cost = "unknown" if est.cost_usd is None else f"${est.cost_usd:.4f}"
        kind = "local approximation, nothing sent" if est.local else "counted by the provider"
        return (
            f"estimated cost {cost} ({kind}) for ~{est.input_tokens} input and "
            f"~{est.output_tokens} output tokens ({est.method})"
        )

    def cost_per_call(self) -> float:
        """The estimated cost of one call still to send (0 when unknown or none to send)."""
        est = self.estimate
        if est is None or est.cost_usd is None or not self.to_send:
            return 0.0
        return est.cost_usd / len(self.to_send)
