"""The ``recorded`` judge: answers that exist only as a batch output file (ADR-0026).

``recorded:NAME`` names a judge whose every answer was produced outside evalkit and
shipped as a Message Batches result file: for instance the reading judge of the offline
studies, a language model that read each request and answered it in the record_scores
format. Its requests are exactly those of an Anthropic judge (same framing, rubrics,
transcript wrapping and answer schema), so ``evalkit judge --judge recorded:NAME
--export-batch FILE --batch-format anthropic`` writes what it must answer and
``--import-batch FILE`` takes the answers back through the same strict parser as a
live call. It never sends anything: :meth:`RecordedBackend.call` is a ``JudgeError``.

Its rows are never gate evidence (the gate treats ``recorded`` like the baseline: a
reference, not a judge that may gate a launch), whatever the file says it is. Cost is
recorded as zero: nothing was paid through evalkit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalkit.errors import JudgeError
from evalkit.judge._base import CostEstimate, Reply
from evalkit.judge._pricing import Price
from evalkit.judge._prompt import JudgeParams, JudgeRequest
from evalkit.judge.anthropic import AnthropicBackend

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


class RecordedBackend(AnthropicBackend):
    """A judge answered only from batch output files (see the module docstring)."""

    kind = "recorded"
    networked = False

    def __init__(self, name: str, *, params: JudgeParams | None = None) -> None:
        if not _NAME.match(name or ""):
            raise JudgeError(
                f"recorded judge: {name!r} is not a name (lower-case letters, digits, '.', "
                "'_', '-'); use recorded:NAME"
            )
        super().__init__(name, params=params, price=Price(0.0, 0.0, 0.0, 0.0))
        self.spec = f"recorded:{name}"

    async def call(self, request: JudgeRequest) -> Reply:
        raise JudgeError(
            f"{self.spec} sends nothing: its answers come from a batch output file "
            "(evalkit judge --import-batch FILE)"
        )

    async def estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate:
        return CostEstimate(0, 0, 0.0, "recorded answers: nothing is sent")
