"""The judge: (framing, rubric, transcript) -> bin and rationale, recorded in a ledger.

``judge_cases(catalogue, cases, dimensions, judge=..., ledger=...)`` plans, sends and
records judge requests and returns a long DataFrame; ``load_ledger(path)`` reads a
ledger (SQLite or a JSONL export) into the same frame. Backends: ``anthropic``,
``openai``, ``replay`` and ``baseline`` (modules of the same names). The prompt and
key rules are in :mod:`evalkit.judge._prompt`, the answer schema in
:mod:`evalkit.judge._answer`, the ledger schema in :mod:`evalkit.judge._ledger`.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.judge._answer import DimensionScore, answer_schema, parse_scores
    from evalkit.judge._ledger import Ledger, export_jsonl, import_jsonl, load_ledger
    from evalkit.judge._plan import Plan, build_requests, make_backend
    from evalkit.judge._prompt import JudgeParams, JudgeRequest, build_request
    from evalkit.judge._records import LEDGER_COLUMNS
    from evalkit.judge._run import ajudge_cases, judge_cases
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_answer": ["DimensionScore", "answer_schema", "parse_scores"],
            "_ledger": ["Ledger", "export_jsonl", "import_jsonl", "load_ledger"],
            "_plan": ["Plan", "build_requests", "make_backend"],
            "_prompt": ["JudgeParams", "JudgeRequest", "build_request"],
            "_records": ["LEDGER_COLUMNS"],
            "_run": ["ajudge_cases", "judge_cases"],
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
