"""Malformed ``usage`` blocks: recorded as that call's ``error``, never a crash, never a
negative cost, never a hole in ``--max-cost``.

Each bad block is sent by the stub (``bad_usage``) for one of five calls; the run must
finish with the other four ``ok``, the bad one ``error`` with a message naming the
field, no bin, cost unknown (None, not 0 and not negative), and a re-run must retry it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import JudgeError
from evalkit.judge import judge_cases, load_ledger
from evalkit.judge._base import UsageError, token_count
from evalkit.judge.anthropic import AnthropicBackend
from evalkit.judge.openai import OpenAIBackend, read_usage
from tests.stubs._server import Fault, bad_usage
from tests.stubs.anthropic_stub import AnthropicStub
from tests.stubs.openai_stub import OpenAIStub

MODEL = "claude-sonnet-4-6"


def _cached(n: int) -> dict[str, Any]:
    return {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": n},
    }


OPENAI_BAD: dict[str, tuple[Fault, str]] = {
    "missing": (bad_usage(absent=True), "usage is missing"),
    "null": (bad_usage(None), "usage is null"),
    "string": (bad_usage("120 tokens"), "usage is a str"),
    "list": (bad_usage([10, 5]), "usage is a list"),
    "negative": (
        bad_usage({"prompt_tokens": -1_000_000, "completion_tokens": 5}),
        "usage.prompt_tokens is -1000000, a negative token count",
    ),
    "bool": (
        bad_usage({"prompt_tokens": 10, "completion_tokens": True}),
        "usage.completion_tokens is True (bool)",
    ),
    "float": (bad_usage({"prompt_tokens": 10.5, "completion_tokens": 5}), "usage.prompt_tokens"),
    "numeric_string": (
        bad_usage({"prompt_tokens": "10", "completion_tokens": 5}),
        "usage.prompt_tokens is '10' (str)",
    ),
    "count_null": (
        bad_usage({"prompt_tokens": None, "completion_tokens": 5}),
        "usage.prompt_tokens is null",
    ),
    "nested_wrongly": (
        bad_usage({"tokens": {"prompt_tokens": 10, "completion_tokens": 5}}),
        "usage.prompt_tokens is missing",
    ),
    "details_not_an_object": (
        bad_usage({"prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": 3}),
        "usage.prompt_tokens_details is an int",
    ),
    "cached_more_than_prompt": (
        bad_usage(_cached(11)),
        "cached_tokens (11) is more than usage.prompt_tokens (10)",
    ),
    "cached_negative": (
        bad_usage(_cached(-3)),
        "usage.prompt_tokens_details.cached_tokens is -3",
    ),
}

ANTHROPIC_BAD: dict[str, tuple[Fault, str]] = {
    "missing": (bad_usage(absent=True), "usage is null"),  # the SDK fills in None
    "null": (bad_usage(None), "usage is null"),
    "string": (bad_usage("lots"), "usage is a str"),
    "negative": (
        bad_usage({"input_tokens": -10_000_000, "output_tokens": 5}),
        "usage.input_tokens is -10000000, a negative token count",
    ),
    "bool": (
        bad_usage({"input_tokens": 10, "output_tokens": False}),
        "usage.output_tokens is False (bool)",
    ),
    "float": (bad_usage({"input_tokens": 10, "output_tokens": 2.5}), "usage.output_tokens"),
    "numeric_string": (
        bad_usage({"input_tokens": "10", "output_tokens": 5}),
        "usage.input_tokens is '10' (str)",
    ),
    "nested_wrongly": (
        bad_usage({"tokens": {"input_tokens": 10, "output_tokens": 5}}),
        "usage.input_tokens is missing",
    ),
    "cache_negative": (
        bad_usage({"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": -7}),
        "usage.cache_read_input_tokens is -7",
    ),
}


def _run(catalogue: Catalogue, ledger: Path, b: Any, **kw: Any) -> Any:
    return judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, progress=False,
                       concurrency=1, **kw)  # fmt: skip


def _check(frame: Any, expected: str) -> None:
    requests = frame.drop_duplicates("request_key")
    assert len(requests) == 5
    bad = requests[requests["status"] != "ok"]
    assert len(bad) == 1, requests[["status", "error"]]
    row = bad.iloc[0]
    assert row.status == "error" and "malformed usage: " in row.error and expected in row.error
    assert frame.loc[frame["request_key"] == row.request_key, "bin"].isna().all()
    assert row.cost_usd is None or row.cost_usd != row.cost_usd  # None (NaN in the frame)
    assert (requests["input_tokens"] >= 0).all() and (requests["output_tokens"] >= 0).all()


@pytest.mark.parametrize("kind", list(OPENAI_BAD))
def test_openai_malformed_usage_is_that_calls_error(
    kind: str, catalogue: Catalogue, openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    fault, expected = OPENAI_BAD[kind]
    openai_stub.script(fault)
    ledger = tmp_path / "l.sqlite"
    b = OpenAIBackend(openai_stub.base_url, "m", backoff_base=0.01, price=(1.0, 2.0))
    frame = _run(catalogue, ledger, b)
    _check(frame, expected)
    assert (frame.drop_duplicates("request_key")["cost_usd"].dropna() > 0).all()
    again = _run(catalogue, ledger, b)  # the error row is retried, and only it
    assert (again["status"] == "ok").all() and len(openai_stub.completion_requests()) == 6


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("kind", list(ANTHROPIC_BAD))
def test_anthropic_malformed_usage_is_that_calls_error(
    kind: str, catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    fault, expected = ANTHROPIC_BAD[kind]
    stub.script(fault)
    ledger = tmp_path / "l.sqlite"
    b = AnthropicBackend(MODEL, base_url=stub.base_url, backoff_base=0.01)
    frame = _run(catalogue, ledger, b)
    _check(frame, expected)
    assert (frame.drop_duplicates("request_key")["cost_usd"].dropna() > 0).all()
    again = _run(catalogue, ledger, b)
    assert (again["status"] == "ok").all() and len(stub.message_requests()) == 6


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_negative_usage_cannot_defeat_max_cost(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    """-10M input tokens used to be recorded as -$30, so a $3 answer after it left the
    spend at -$27 and the run went on; now the bad call counts at the plan's estimate
    per call, and the $3 answer stops the run."""
    stub.script(
        bad_usage({"input_tokens": -10_000_000, "output_tokens": 5}),
        bad_usage({"input_tokens": 1_000_000, "output_tokens": 0}),  # valid: $3.00
    )
    ledger = tmp_path / "l.sqlite"
    b = AnthropicBackend(MODEL, base_url=stub.base_url, backoff_base=0.01)
    with pytest.raises(JudgeError, match="spend passed --max-cost"):
        _run(catalogue, ledger, b, max_cost=1.0)
    rows = load_ledger(ledger).drop_duplicates("request_key")
    assert sorted(rows["status"]) == ["error", "ok"]
    assert len(stub.message_requests()) == 2  # nothing sent after the budget was passed
    assert rows["cost_usd"].min() > 0


@pytest.mark.parametrize(
    ("value", "ok"),
    [(0, True), (7, True), (-1, False), (True, False), (False, False), (1.0, False),
     ("1", False), (None, False), ([1], False)],
)  # fmt: skip
def test_token_count_is_a_non_negative_int_and_not_a_bool(value: Any, ok: bool) -> None:
    if ok:
        assert token_count(value, "f") == value
    else:
        with pytest.raises(UsageError, match=r"^f is "):
            token_count(value, "f")
    assert token_count(None, "f", required=False) == 0


def test_read_usage_splits_cached_prompt_tokens() -> None:
    usage = read_usage(
        {"usage": {"prompt_tokens": 100, "completion_tokens": 7,
                   "prompt_tokens_details": {"cached_tokens": 60}}}
    )  # fmt: skip
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (40, 60, 7)
    plain = read_usage({"usage": {"prompt_tokens": 5, "completion_tokens": 1}})
    assert (plain.input_tokens, plain.cache_read_tokens) == (5, 0)
