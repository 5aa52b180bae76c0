"""A judge run: plan the requests, skip what the ledger holds, send the rest, record.

``judge_cases(catalogue, cases, dimensions, judge=..., ledger=...)`` is the one entry
point for the ``evalkit judge`` CLI and for notebooks; it returns the long frame of
:data:`evalkit.ledger.LEDGER_COLUMNS`. ``export_batch`` and ``import_batch`` hand a run
to a provider's batch API or to vLLM as files and take it back.

This package sits above the two it joins: :mod:`evalkit.judge` (one call: prompt,
answer, backends) and :mod:`evalkit.ledger` (the store). Modules: the plan
:mod:`~evalkit.judging._plan`, progress :mod:`~evalkit.judging._progress`, direct
sending :mod:`~evalkit.judging._send`, sharing a ledger with other processes
:mod:`~evalkit.judging._sharing` and :mod:`~evalkit.judging._takeover`, Message Batches
:mod:`~evalkit.judging._batches`, batch files :mod:`~evalkit.judging._batch_files`, the
CLI :mod:`~evalkit.judging._cli` (ADR-0033).
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.judging._batch_files import export_batch, import_batch
    from evalkit.judging._plan import Plan
    from evalkit.judging._run import ajudge_cases, judge_cases
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_batch_files": ["export_batch", "import_batch"],
            "_plan": ["Plan"],
            "_run": ["ajudge_cases", "judge_cases"],
        },
    )

__all__ = ["Plan", "ajudge_cases", "export_batch", "import_batch", "judge_cases"]
