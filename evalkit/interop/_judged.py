"""Scores from another tool as ledger records of an imported judge.

Each scorer is one judge, ``imported:inspect/<scorer>`` (backend ``inspect``, model the
scorer's name). For each case it answers one request covering the dimensions the mapping
reads from that scorer, built by :func:`evalkit.judge.build_request` on the imported
catalogue with the standard :class:`~evalkit.judge.JudgeParams`, so its request and
content keys are the ones a live judge of the same catalogue would compute: ``evalkit
gate`` finds the rows, and ``evalkit study --judge replay:imported:inspect/<scorer>``
replays them. No prompt is ever sent; the nonce is derived from the eval id only so that
a re-import writes the same record.

Status (ADR-0022): ``ok`` when every dimension of the request maps to a frozen bin;
``unparseable`` otherwise, with ``raw_response`` holding the score as the log has it
(value, answer, explanation, sample error) and ``problem`` saying what was not mapped:
a sample the scorer did not score, a sample that errored, a value outside the mapping.
A value is never binned by a guess. Token counts are 0, cost and latency unknown (None
and 0.0): the scorer's own cost is not in the ledger.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from evalkit.catalogue import Catalogue
from evalkit.interop._inspect import InspectSample, InspectScore
from evalkit.interop._mapping import ScoreMapping, bin_for, dimension_value
from evalkit.judge import JudgeParams, build_request
from evalkit.judge._prompt import JudgeIdentity, order_dimensions

BACKEND = "inspect"


def judge_name(scorer: str) -> str:
    """The judge spec of an imported Inspect scorer: ``imported:inspect/<scorer>``."""
    return f"imported:{BACKEND}/{scorer}"


def _raw(score: InspectScore | None, sample: InspectSample) -> str:
    doc: dict[str, Any] = {
        "log": sample.log,
        "eval_id": sample.eval_id,
        "sample_id": sample.sample_id,
        "epoch": sample.epoch,
        "error": sample.error,
    }
    if score is not None:
        doc.update(value=score.value, answer=score.answer, explanation=score.explanation)
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, default=repr)


def _rationale(scorer: str, value: Any, score: InspectScore) -> str:
    text = (score.explanation or "").strip()
    shown = json.dumps(value, ensure_ascii=False, default=repr)
    return f"Inspect scorer {scorer} value {shown}" + (f": {text}" if text else "")


def _problem(sample: InspectSample, scorer: str, unmapped: dict[str, Any]) -> str | None:
    if sample.error is not None:
        return f"the Inspect sample errored ({sample.error}); scorer {scorer} gave no score"
    if scorer not in sample.scores:
        return f"scorer {scorer} did not score this sample"
    if unmapped:
        shown = ", ".join(f"{d}: {json.dumps(v, default=repr)}" for d, v in unmapped.items())
        return f"value(s) outside the mapping, not binned: {shown}"
    return None


def scorer_record(
    catalogue: Catalogue, sample: InspectSample, scorer: str, mapping: ScoreMapping
) -> dict[str, Any]:
    """The ledger record of ``scorer``'s answer on the case of ``sample`` (module docstring)."""
    dims = order_dimensions(catalogue, mapping.scorers()[scorer])
    case = catalogue.case(sample.sample_id)
    turn = len(case.turns) - 1
    identity = JudgeIdentity(judge_name(scorer), BACKEND, scorer, JudgeParams())
    salt = hashlib.sha256(f"evalkit-import:{sample.eval_id}".encode()).digest()
    rubrics = [catalogue.rubric(d) for d in dims]
    request = build_request(catalogue, case, turn, rubrics, identity, salt)
    score = sample.scores.get(scorer) if sample.error is None else None
    results: list[dict[str, Any]] = []
    unmapped: dict[str, Any] = {}
    if score is not None:
        for dim in dims:
            rule = mapping.dimensions[dim]
            value = dimension_value(rule, score.value)
            bin_ = bin_for(rule, value)
            if bin_ is None:
                unmapped[dim] = score.value if rule.key is None else value
                continue
            results.append(
                {
                    "dimension": dim,
                    "bin": bin_,
                    "signal_present": None,
                    "evidence_turns": [],
                    "rationale": _rationale(scorer, value, score),
                    "injection_attempt": False,
                }
            )
    problem = _problem(sample, scorer, unmapped)
    meta = request.metadata()
    meta.pop("turn_ids")
    meta.pop("bins")
    return {
        **meta,
        "status": "ok" if problem is None else "unparseable",
        "attempts": 1,
        "raw_response": _raw(score, sample),
        "problem": problem,
        "error": None,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_creation_tokens": 0,
        "cost_usd": None,
        "latency_s": 0.0,
        "response_model": None,
        "batch_id": None,
        "created_at": sample.created,
        "results": results if problem is None else [],
    }


def scorer_records(
    catalogue: Catalogue, samples: Sequence[InspectSample], mapping: ScoreMapping
) -> list[dict[str, Any]]:
    """One record per (sample, scorer of the mapping), samples in order."""
    return [
        scorer_record(catalogue, sample, scorer, mapping)
        for sample in samples
        for scorer in mapping.scorers()
    ]
