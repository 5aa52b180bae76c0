"""Replay: answers from the ledger only; a miss names the case and the rubric hash; a judge
spec that carries a credential is stored scrubbed and still replays."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import LedgerError
from evalkit.judge import Ledger, judge_cases
from evalkit.judge.anthropic import AnthropicBackend
from tests.stubs.anthropic_stub import AnthropicStub
from tests.stubs.openai_stub import OpenAIStub


def test_replay_returns_what_the_ledger_holds(catalogue: Catalogue, tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    first = judge_cases(catalogue, judge="baseline", ledger=ledger, progress=False)
    replayed = judge_cases(catalogue, judge="replay", ledger=ledger, progress=False)
    pd.testing.assert_frame_equal(first, replayed)


def test_replay_from_a_jsonl_export_on_a_fresh_ledger(catalogue: Catalogue, tmp_path: Path) -> None:
    first = judge_cases(catalogue, judge="baseline", ledger=tmp_path / "a.sqlite", progress=False)
    with Ledger(tmp_path / "a.sqlite") as led:
        led.export_jsonl(tmp_path / "run.jsonl")
    with Ledger(tmp_path / "b.sqlite") as led:
        led.import_jsonl(tmp_path / "run.jsonl", catalogue=catalogue)
    replayed = judge_cases(catalogue, judge="replay", ledger=tmp_path / "b.sqlite", progress=False)
    pd.testing.assert_frame_equal(first, replayed)


def test_a_miss_names_the_case_and_rubric_hash(catalogue: Catalogue, tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    judge_cases(catalogue, ["j-masked"], judge="baseline", ledger=ledger, progress=False)
    rubric_hash = catalogue.rubric("self_harm").content_hash(catalogue.constants.bins)
    with pytest.raises(LedgerError) as err:
        judge_cases(catalogue, judge="replay", ledger=ledger, progress=False)
    text = str(err.value)
    assert "replay found no answer for 4 request(s)" in text
    assert "case j-emergency turn t1" in text and "j-masked" not in text
    assert f"self_harm v3 sha256:{rubric_hash[:12]}" in text
    with pytest.raises(LedgerError, match=r"self_harm v1 sha256:"):
        judge_cases(
            catalogue,
            ["j-masked"],
            judge="replay",
            ledger=ledger,
            rubric_versions={"self_harm": "v1"},
            progress=False,
        )


def test_several_judges_must_be_named(
    catalogue: Catalogue, stub: AnthropicStub, fake_key: str, tmp_path: Path
) -> None:
    ledger = tmp_path / "l.sqlite"
    judge_cases(catalogue, ["j-masked"], judge="baseline", ledger=ledger, progress=False)
    b = AnthropicBackend("claude-sonnet-4-6", base_url=stub.base_url)
    live = judge_cases(
        catalogue, ["j-masked"], judge=b.spec, ledger=ledger, backend=b, progress=False
    )
    with pytest.raises(LedgerError, match="several judges"):
        judge_cases(catalogue, ["j-masked"], judge="replay", ledger=ledger, progress=False)
    named = judge_cases(
        catalogue,
        ["j-masked"],
        judge="replay:anthropic:claude-sonnet-4-6",
        ledger=ledger,
        progress=False,
    )
    pd.testing.assert_frame_equal(live, named)
    base = judge_cases(
        catalogue, ["j-masked"], judge="replay:baseline", ledger=ledger, progress=False
    )
    assert (base["judge"] == "baseline").all()


def test_a_spec_with_a_credential_is_stored_scrubbed_and_replays(
    catalogue: Catalogue, openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    ledger = tmp_path / "l.sqlite"
    host = openai_stub.base_url.removeprefix("http://")
    spec = f"openai:http://evalkit:url-password-0451@{host}:qwen2.5:7b"
    live = judge_cases(catalogue, ["j-masked"], judge=spec, ledger=ledger, progress=False)
    assert (live["status"] == "ok").all()
    assert (live["judge"] == f"openai:http://[redacted]@{host}:qwen2.5:7b").all()
    assert (live["model"] == "qwen2.5:7b").all()  # the userinfo is part of the URL
    judge_cases(catalogue, ["j-benign"], judge="baseline", ledger=ledger, progress=False)
    named = judge_cases(
        catalogue, ["j-masked"], judge=f"replay:{spec}", ledger=ledger, progress=False
    )
    pd.testing.assert_frame_equal(live, named)
    # The key does not hold the URL, so another password finds the same rows: nothing sent.
    rotated = spec.replace("url-password-0451", "rotated-password-9")
    sent = len(openai_stub.completion_requests())
    again = judge_cases(catalogue, ["j-masked"], judge=rotated, ledger=ledger, progress=False)
    assert len(openai_stub.completion_requests()) == sent
    pd.testing.assert_frame_equal(live, again)
    assert b"url-password-0451" not in ledger.read_bytes()
