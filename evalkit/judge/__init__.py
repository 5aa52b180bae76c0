"""The judge: one call, (framing, rubric, transcript) -> bin and rationale.

The prompt and key rules are in :mod:`evalkit.judge._prompt`, the answer schema and its
strict parser in :mod:`evalkit.judge._answer`, the requests of a run in
:mod:`evalkit.judge._requests`, and the backends by name (:func:`make_backend`) in
modules of their own: ``anthropic``, ``openai``, ``recorded``, ``replay`` and
``baseline``. Nothing here reads or writes a ledger.

For compatibility this facade also names the store and the run, which live above it:
``Ledger``, ``load_ledger``, ``export_jsonl``, ``import_jsonl`` and ``LEDGER_COLUMNS``
are :mod:`evalkit.ledger`'s; ``judge_cases``, ``ajudge_cases`` and ``Plan`` are
:mod:`evalkit.judging`'s (ADR-0033). They are looked up by name on first use, so no
module of this package imports either.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.judge._answer import DimensionScore, answer_schema, parse_scores
    from evalkit.judge._backends import make_backend
    from evalkit.judge._prompt import JudgeParams, JudgeRequest, build_request
    from evalkit.judge._requests import build_requests
    from evalkit.judging import Plan, ajudge_cases, judge_cases
    from evalkit.ledger import LEDGER_COLUMNS, Ledger, export_jsonl, import_jsonl, load_ledger
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_answer": ["DimensionScore", "answer_schema", "parse_scores"],
            "_backends": ["make_backend"],
            "_prompt": ["JudgeParams", "JudgeRequest", "build_request"],
            "_requests": ["build_requests"],
            "evalkit.judging": ["Plan", "ajudge_cases", "judge_cases"],
            "evalkit.ledger": [
                "LEDGER_COLUMNS",
                "Ledger",
                "export_jsonl",
                "import_jsonl",
                "load_ledger",
            ],
        },
    )

__all__ = [
    "LEDGER_COLUMNS",
    "DimensionScore",
    "JudgeParams",
    "JudgeRequest",
    "Ledger",
    "Plan",
    "ajudge_cases",
    "answer_schema",
    "build_request",
    "build_requests",
    "export_jsonl",
    "import_jsonl",
    "judge_cases",
    "load_ledger",
    "make_backend",
    "parse_scores",
]
