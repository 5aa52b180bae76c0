"""Resumable runs: finished conversations are never run again, failed ones are; stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.catalogue import Case
from evalkit.runner import (
    CallableTarget,
    RunnerError,
    default_transcripts_path,
    open_store,
    read_transcripts,
    run_conversations,
)
from tests.runner.conftest import chat_reply


@pytest.mark.parametrize("suffix", [".jsonl", ".sqlite"])
def test_a_resumed_run_reruns_nothing_finished(
    small_cases: list[Case], tmp_path: Path, suffix: str
) -> None:
    calls: list[int] = []
    fail_on = {"How much water should I drink?"}

    def agent(messages: list[dict[str, str]]) -> str:
        calls.append(len(messages))
        if messages[-1]["content"] in fail_on:
            raise ConnectionError("model server went away")
        return chat_reply(messages)

    target = CallableTarget(agent, name="agent-v1")
    store = tmp_path / f"t{suffix}"
    first = run_conversations(small_cases, target, store=store, concurrency=2)
    assert first.attrs["run"] == {"ran": 3, "reused": 0, "failed": 1}
    assert len(calls) == 1 + 2 + 3
    r1 = first[first["case_id"] == "r1"]
    assert r1["error"].tolist()[-1] == "ConnectionError: model server went away"

    # The failure is fixed; only r1 runs again, as attempt 2.
    fail_on.clear()
    calls.clear()
    second = run_conversations(small_cases, target, store=store)
    assert second.attrs["run"] == {"ran": 1, "reused": 2, "failed": 0}
    assert calls == [1]
    assert second["error"].isna().all()
    assert second.groupby("case_id")["attempt"].first().to_dict() == {"r1": 2, "r2": 1, "r3": 1}
    assert second["case_id"].drop_duplicates().tolist() == ["r1", "r2", "r3"]

    # Everything finished: a third run calls nothing and returns the same records.
    calls.clear()
    third = run_conversations(small_cases, target, store=store)
    assert calls == [] and third.attrs["run"]["ran"] == 0
    assert third["text"].tolist() == second["text"].tolist()
    assert len(read_transcripts(store)) == len(third)

    # Another target (another fingerprint) is another conversation.
    other = run_conversations(small_cases[:1], CallableTarget(agent, name="agent-v2"), store=store)
    assert other.attrs["run"]["ran"] == 1 and calls == [1]


def test_jsonl_survives_a_line_cut_by_a_crash(small_cases: list[Case], tmp_path: Path) -> None:
    store = tmp_path / "t.jsonl"
    run_conversations(small_cases[:2], lambda m: chat_reply(m), store=store)
    n = len(read_transcripts(store))
    with store.open("a", encoding="utf-8") as fh:
        fh.write('{"conversation": "abc", "attempt": 1, "case_id": "r3", "tu')  # no newline
    assert len(read_transcripts(store)) == n
    recs = run_conversations(small_cases, lambda m: chat_reply(m), store=store)
    assert recs.attrs["run"]["ran"] == 1  # r3 only; the cut line was dropped before appending
    lines = store.read_text(encoding="utf-8").splitlines()
    assert all(line.startswith('{"conversation"') and line.endswith("}") for line in lines)
    store.write_text(store.read_text(encoding="utf-8") + "not json\n{}\n", encoding="utf-8")
    with pytest.raises(RunnerError, match="not a JSON record"):
        read_transcripts(store)


def test_store_paths(tmp_path: Path) -> None:
    assert default_transcripts_path(tmp_path / "ledgers" / "onset.sqlite") == (
        tmp_path / "ledgers" / "onset.transcripts.jsonl"
    )
    with pytest.raises(RunnerError, match=r"\.jsonl or \.sqlite"):
        open_store(tmp_path / "t.csv")
    with pytest.raises(RunnerError, match="no such"):
        read_transcripts(tmp_path / "missing.jsonl")
    with pytest.raises(RunnerError, match="max_turns"):
        run_conversations([], "replay", store=tmp_path / "t.jsonl", max_turns=1)
