"""Runner targets share the judge's traffic controller: 429 is flow control, limits pace."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.catalogue import Case
from evalkit.runner import RunnerError, run_conversations
from evalkit.runner._anthropic import AnthropicTarget
from evalkit.runner._openai import OpenAITarget
from evalkit.traffic import TrafficController
from tests.runner.conftest import FAKE_KEY, ChatAnthropicStub
from tests.stubs.anthropic_stub import rate_limited
from tests.stubs.openai_stub import OpenAIStub


def test_a_429_does_not_use_the_targets_retry_budget(
    chat_stub: ChatAnthropicStub, small_cases: list[Case], tmp_path: Path
) -> None:
    target = AnthropicTarget(
        "claude-test", api_key=FAKE_KEY, base_url=chat_stub.base_url, max_retries=0
    )
    chat_stub.script(*[rate_limited(0.001)] * 3)
    recs = run_conversations(small_cases[:1], target, store=tmp_path / "t.jsonl")
    assert recs["error"].isna().all()
    answered = int((recs["role"] == "assistant").sum())
    assert answered >= 1 and len(chat_stub.message_requests()) == 3 + answered
    assert target.traffic.window.rate_limited == 3


def test_targets_read_the_headers_and_take_user_limits(
    small_cases: list[Case], tmp_path: Path
) -> None:
    with OpenAIStub(rate_limit=(30, 1.0)) as stub:
        target = OpenAITarget(stub.base_url, "m", rpm=600)
        recs = run_conversations(small_cases[:1], target, store=tmp_path / "t.jsonl")
        assert recs["error"].isna().all()
    budgets = target.traffic.budgets
    assert budgets.reported["requests"] == 1800  # x-ratelimit-limit-requests
    assert budgets.per_minute("requests") == 600  # the user's is lower: it binds
    shared = TrafficController(ceiling=4)
    a = OpenAITarget("http://x.test/v1", "m", traffic=shared)
    b = OpenAITarget("http://y.test/v1", "m", traffic=shared)
    assert a.traffic is b.traffic is shared


def test_a_bad_limit_is_a_runner_error() -> None:
    with pytest.raises(RunnerError, match="--rpm -1 is not a positive number"):
        AnthropicTarget("claude-test", api_key=FAKE_KEY, rpm=-1)
