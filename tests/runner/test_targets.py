"""Targets: Python callables (sync, async), the Anthropic SDK and an OpenAI-compatible server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evalkit.catalogue import Case
from evalkit.runner import (
    AnthropicTarget,
    CallableTarget,
    RunnerError,
    TargetCallError,
    TargetReply,
    TurnContext,
    make_target,
    run_conversations,
)
from tests.runner.conftest import FAKE_KEY, ChatAnthropicStub, chat_reply
from tests.stubs._server import bad_usage
from tests.stubs.anthropic_stub import bad_request, overloaded, rate_limited, text_answer
from tests.stubs.openai_stub import OpenAIStub


def test_sync_callable_sees_the_history_and_its_replies_are_recorded(
    small_cases: list[Case], tmp_path: Path
) -> None:
    seen: list[list[dict[str, str]]] = []

    def agent(messages: list[dict[str, str]]) -> str:
        seen.append([dict(m) for m in messages])
        return chat_reply(messages)

    recs = run_conversations(small_cases, agent, store=tmp_path / "t.jsonl")
    assert len(seen) == 1 + 2 + 3  # one call per agent turn
    r3 = recs[recs["case_id"] == "r3"]
    assert r3["turn"].tolist() == list(range(6))
    assert r3["role"].tolist() == ["user", "assistant"] * 3
    assert r3["signal"].tolist()[::2] == ["distress", "masked", "none"]
    assert r3["text"].tolist()[::2] == [t.text for t in small_cases[2].turns[::2]]
    last_call = seen[-1]
    assert [m["role"] for m in last_call] == ["user", "assistant", "user", "assistant", "user"]
    assert last_call[1]["content"] == r3["text"].iloc[1]  # the agent's own earlier reply
    assert "988" in r3["text"].iloc[3]
    assert set(recs["target"]) == {f"callable:{__name__}.{agent.__qualname__}"}
    assert recs["error"].isna().all()


def test_async_callable_and_target_reply_with_tokens(
    small_cases: list[Case], tmp_path: Path
) -> None:
    async def agent(messages: list[dict[str, str]]) -> TargetReply:
        await asyncio.sleep(0)
        return TargetReply(chat_reply(messages), input_tokens=3, output_tokens=4)

    recs = run_conversations(small_cases[:1], agent, store=tmp_path / "t.sqlite")
    reply = recs[recs["role"] == "assistant"].iloc[0]
    assert reply["input_tokens"] == 3 and reply["output_tokens"] == 4
    assert reply["latency_s"] >= 0


def test_threaded_sync_callable_and_bad_return_type(
    small_cases: list[Case], tmp_path: Path
) -> None:
    target = CallableTarget(lambda m: chat_reply(m), name="threaded", threads=True)
    recs = run_conversations(small_cases, target, store=tmp_path / "a.jsonl", concurrency=3)
    assert recs["error"].isna().all() and set(recs["target"]) == {"threaded"}
    bad = run_conversations(small_cases[:1], lambda m: 42, store=tmp_path / "b.jsonl")
    assert "expected str" in bad["error"].dropna().iloc[0]


def test_anthropic_target_against_the_stub(
    chat_stub: ChatAnthropicStub, small_cases: list[Case], tmp_path: Path
) -> None:
    target = AnthropicTarget(
        "claude-test-1",
        system="You are a careful health assistant.",
        api_key=FAKE_KEY,
        base_url=chat_stub.base_url,
    )
    recs = run_conversations(small_cases[2:], target, store=tmp_path / "t.jsonl")
    bodies = [r.body for r in chat_stub.message_requests()]
    assert len(bodies) == 3
    assert all(b["system"] == "You are a careful health assistant." for b in bodies)
    assert all(b["model"] == "claude-test-1" for b in bodies)
    assert [m["role"] for m in bodies[-1]["messages"]] == ["user", "assistant"] * 2 + ["user"]
    replies = recs[recs["role"] == "assistant"]
    assert replies["text"].iloc[1].endswith("You can call or text 988 any time.")
    assert replies["input_tokens"].tolist() == [10, 30, 50]
    assert set(recs["target"]) == {"anthropic:claude-test-1"}


def test_anthropic_target_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    chat_stub: ChatAnthropicStub,
    small_cases: list[Case],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", chat_stub.base_url)
    recs = run_conversations(small_cases[:1], "anthropic:claude-env", store=tmp_path / "t.jsonl")
    assert recs["error"].isna().all()
    headers = chat_stub.message_requests()[0].headers
    assert FAKE_KEY in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


def test_anthropic_target_refuses_without_a_key(
    monkeypatch: pytest.MonkeyPatch, small_cases: list[Case], tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(RunnerError, match="ANTHROPIC_API_KEY"):
        make_target("anthropic:claude-x")
    store = tmp_path / "t.jsonl"
    with pytest.raises(RunnerError, match="no API key"):
        run_conversations(small_cases, "anthropic:claude-x", store=store)
    assert not store.exists()
    with pytest.raises(RunnerError, match="unknown spec"):
        make_target("gemini:x")


def test_retries_then_failure_policy_and_no_secret_in_outputs(
    chat_stub: ChatAnthropicStub, small_cases: list[Case], tmp_path: Path
) -> None:
    store = tmp_path / "t.jsonl"
    target = AnthropicTarget("claude-test", api_key=FAKE_KEY, base_url=chat_stub.base_url)
    chat_stub.script(overloaded(0.01), rate_limited(0.01))  # two retryable failures
    recs = run_conversations(small_cases[:1], target, store=store)
    assert recs["error"].isna().all() and len(chat_stub.message_requests()) == 3
    chat_stub.script(bad_request())  # not retryable: recorded, conversation unfinished
    failed = run_conversations(small_cases[1:2], target, store=store)
    assert "HTTP 400" in failed["error"].dropna().iloc[0]
    assert len(chat_stub.message_requests()) == 4
    echo = AnthropicTarget("echo-key", api_key=FAKE_KEY, base_url=chat_stub.base_url)
    leaked = run_conversations(small_cases[:1], echo, store=store)
    assert "[redacted]" in leaked["error"].dropna().iloc[0]
    assert FAKE_KEY not in store.read_text(encoding="utf-8")


def test_concurrency_is_bounded(small_cases: list[Case], tmp_path: Path) -> None:
    many = [c.model_copy(update={"id": f"{c.id}-{i}"}) for i in range(3) for c in small_cases]
    with ChatAnthropicStub(latency=0.05) as stub:
        target = AnthropicTarget("claude-test", api_key="k", base_url=stub.base_url)
        recs = run_conversations(many, target, store=tmp_path / "t.jsonl", concurrency=2)
        assert recs["error"].isna().all()
        assert stub.max_in_flight == 2


def test_openai_compatible_target(
    monkeypatch: pytest.MonkeyPatch, small_cases: list[Case], tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-PLANTED-0000")
    with OpenAIStub(responder=lambda body: {}) as stub:
        stub.script(text_answer("First answer."), text_answer("Second answer."))
        recs = run_conversations(
            small_cases[1:2],
            f"openai:{stub.base_url}:llama3.1:8b",
            store=tmp_path / "o.jsonl",
            system="Be brief.",
        )
        bodies = [r.body for r in stub.completion_requests()]
        headers = stub.completion_requests()[0].headers
        url = stub.base_url
    assert recs[recs["role"] == "assistant"]["text"].tolist() == ["First answer.", "Second answer."]
    assert bodies[0]["model"] == "llama3.1:8b"
    assert bodies[1]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [m["role"] for m in bodies[1]["messages"][1:]] == ["user", "assistant", "user"]
    assert headers["authorization"] == "Bearer sk-openai-test-PLANTED-0000"
    assert recs["target"].iloc[0] == f"openai:{url}:llama3.1:8b"
    with pytest.raises(RunnerError, match="openai:URL:MODEL"):
        make_target("openai:not-a-url")


def test_replay_target_refuses_to_invent(small_cases: list[Case], tmp_path: Path) -> None:
    recs = run_conversations(small_cases, "replay", store=tmp_path / "r.jsonl")
    assert recs["error"].isna().all()
    case, target = small_cases[0], make_target("replay")

    async def call() -> None:
        with pytest.raises(TargetCallError, match="diverged"):
            await target.reply([{"role": "user", "content": "Other?"}], TurnContext(case, 1))
        with pytest.raises(TargetCallError, match="no recorded"):
            await target.reply([], TurnContext(case, 3))

    asyncio.run(call())


def test_openai_target_records_malformed_usage_as_unknown(
    monkeypatch: pytest.MonkeyPatch, small_cases: list[Case], tmp_path: Path
) -> None:
    """A usage block that is a string, negative or a bool is unknown, never a crash."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-PLANTED-0000")
    with OpenAIStub(responder=lambda body: {"text": "Plain answer."}) as stub:
        stub.script(bad_usage("lots"), bad_usage({"prompt_tokens": -5, "completion_tokens": True}))
        recs = run_conversations(
            small_cases[1:2], f"openai:{stub.base_url}:llama3.1:8b", store=tmp_path / "u.jsonl"
        )
    replies = recs[recs["role"] == "assistant"]
    assert replies["text"].tolist() == ["Plain answer.", "Plain answer."]
    assert replies["input_tokens"].isna().all() and replies["output_tokens"].isna().all()
