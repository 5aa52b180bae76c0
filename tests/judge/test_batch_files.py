"""Batch files out and in (ADR-0026): export, a batch engine answers, import.

The engine is :mod:`tests.stubs.batch_runner`, which POSTs each line to the stub server
as the provider's batch API or vLLM's ``run_batch`` would, and writes the output in that
engine's format. The stubs answer deterministically from the request id, so a live run
against the same stub must leave the same answers in its ledger.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.cli import main
from evalkit.judge import Ledger, judge_cases, load_ledger
from evalkit.judge.anthropic import AnthropicBackend
from evalkit.judge.openai import OpenAIBackend
from tests.stubs.anthropic_stub import AnthropicStub
from tests.stubs.batch_runner import run_batch
from tests.stubs.openai_stub import OpenAIStub

MODEL = "claude-sonnet-4-6"
ANSWER = ["request_key", "case_id", "dimension", "turn", "status", "bin", "signal_present",
          "rationale", "evidence_turns", "judge", "model", "response_model"]  # fmt: skip


def _cli(catalogue: Catalogue, judge: str, ledger: Path, *extra: str) -> int:
    return main(["judge", "--catalogue", str(catalogue.root), "--judge", judge,
                 "--ledger", str(ledger), "--quiet", *extra])  # fmt: skip


def _answers(ledger: Path) -> pd.DataFrame:
    frame = load_ledger(ledger)
    return frame[ANSWER].sort_values(["request_key", "dimension"], ignore_index=True)


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_export_engine_import_equals_a_live_run(
    catalogue: Catalogue,
    tmp_path: Path,
    stub: AnthropicStub,
    openai_stub: OpenAIStub,
    fmt: str,
) -> None:
    server: Any = stub if fmt == "anthropic" else openai_stub
    judge = f"anthropic:{MODEL}" if fmt == "anthropic" else f"openai:{openai_stub.base_url}:m-1"
    batch_in, batch_out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    ledger = tmp_path / "batch.sqlite"
    assert _cli(catalogue, judge, ledger, "--export-batch", str(batch_in)) == 0
    lines = [json.loads(x) for x in batch_in.read_text().splitlines()]
    assert lines and len({x["custom_id"] for x in lines}) == len(lines)
    if fmt == "openai":
        assert {x["url"] for x in lines} == {"/v1/chat/completions"}
    before = len(server.requests)
    assert run_batch(batch_in, batch_out, server.base_url) == len(lines)
    assert len(server.requests) - before == len(lines)  # every request answered once
    assert _cli(catalogue, judge, ledger, "--import-batch", str(batch_out)) == 0
    # a second export has nothing left to ask; a second import records nothing twice
    assert _cli(catalogue, judge, ledger, "--export-batch", str(batch_in)) == 0
    assert batch_in.read_text() == ""
    assert _cli(catalogue, judge, ledger, "--import-batch", str(batch_out)) == 0

    live = tmp_path / "live.sqlite"
    if fmt == "anthropic":
        backend: Any = AnthropicBackend(MODEL, base_url=stub.base_url, api_key="test")
    else:
        backend = OpenAIBackend(openai_stub.base_url, "m-1", api_key="test")
    judge_cases(catalogue, judge=judge, ledger=live, backend=backend, progress=False)
    got, want = _answers(ledger), _answers(live)
    assert len(got) == len(want) > 0
    pd.testing.assert_frame_equal(got, want)


def _exported(catalogue: Catalogue, stub: AnthropicStub, tmp_path: Path) -> tuple[Path, Path]:
    ledger = tmp_path / "l.sqlite"
    assert _cli(catalogue, f"anthropic:{MODEL}", ledger, "--export-batch", str(tmp_path / "i")) == 0
    run_batch(tmp_path / "i", tmp_path / "o", stub.base_url)
    return ledger, tmp_path / "o"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, items: list[Any]) -> None:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in items))


BREAKS = {
    "unknown custom_id": (lambda ls: [{**ls[0], "custom_id": "f" * 64}, *ls[1:]], "custom_id"),
    "duplicated custom_id": (lambda ls: [*ls, ls[0]], "again"),
    "another model": (
        lambda ls: [{**ls[0], "result": {**ls[0]["result"], "message": {
            **ls[0]["result"]["message"], "model": "claude-opus-4-6"}}}, *ls[1:]],
        "is not the judge's",
    ),
    "malformed line": (lambda ls: ["{not json", *ls[1:]], "malformed JSON"),
    "not an object": (lambda ls: ["[1, 2]", *ls[1:]], "not a JSON object"),
    "unknown result type": (
        lambda ls: [{**ls[0], "result": {"type": "won"}}, *ls[1:]], "result.type"
    ),
    "not a message": (
        lambda ls: [{**ls[0], "result": {"type": "succeeded", "message": {
            "model": MODEL}}}, *ls[1:]],
        "not a Message",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_broken_output_file_exits_2_names_the_line_and_records_nothing(
    catalogue: Catalogue,
    tmp_path: Path,
    stub: AnthropicStub,
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    ledger, out = _exported(catalogue, stub, tmp_path)
    breaker, expected = BREAKS[name]
    bad = tmp_path / "bad.jsonl"
    _write(bad, breaker(_lines(out)))
    capsys.readouterr()
    assert _cli(catalogue, f"anthropic:{MODEL}", ledger, "--import-batch", str(bad)) == 2
    err = capsys.readouterr().err
    assert expected in err and str(bad) in err and "line " in err and "nothing was recorded" in err
    with Ledger(ledger) as led:
        assert led.records() == []


def test_errored_lines_are_error_rows_that_the_next_export_asks_again(
    catalogue: Catalogue, tmp_path: Path, stub: AnthropicStub
) -> None:
    ledger = tmp_path / "l.sqlite"
    judge = f"anthropic:{MODEL}"
    assert _cli(catalogue, judge, ledger, "--export-batch", str(tmp_path / "i")) == 0
    first = _lines(tmp_path / "i")[0]["custom_id"]
    run_batch(tmp_path / "i", tmp_path / "o", stub.base_url, errored={first})
    assert _cli(catalogue, judge, ledger, "--import-batch", str(tmp_path / "o")) == 0
    rows = load_ledger(ledger).drop_duplicates("request_key")
    assert (rows["status"] == "error").sum() == 1
    assert _cli(catalogue, judge, ledger, "--export-batch", str(tmp_path / "again")) == 0
    assert [x["custom_id"] for x in _lines(tmp_path / "again")] == [first]
    run_batch(tmp_path / "again", tmp_path / "o2", stub.base_url)
    assert _cli(catalogue, judge, ledger, "--import-batch", str(tmp_path / "o2")) == 0
    assert set(load_ledger(ledger)["status"]) == {"ok"}


def test_another_answer_for_a_recorded_request_is_refused(
    catalogue: Catalogue, tmp_path: Path, stub: AnthropicStub
) -> None:
    ledger, out = _exported(catalogue, stub, tmp_path)
    assert _cli(catalogue, f"anthropic:{MODEL}", ledger, "--import-batch", str(out)) == 0
    lines = _lines(out)
    msg = lines[0]["result"]["message"]
    for block in msg["content"]:
        for score in block["input"]["scores"]:
            score["rationale"] = "changed afterwards"
    _write(tmp_path / "changed.jsonl", lines)
    code = _cli(catalogue, f"anthropic:{MODEL}", ledger, "--import-batch",
                str(tmp_path / "changed.jsonl"))  # fmt: skip
    assert code == 2


def test_the_format_must_fit_the_judge(catalogue: Catalogue, tmp_path: Path) -> None:
    code = _cli(catalogue, f"anthropic:{MODEL}", tmp_path / "l.sqlite", "--export-batch",
                str(tmp_path / "x"), "--batch-format", "openai")  # fmt: skip
    assert code == 2 and not (tmp_path / "x").exists()


def test_a_recorded_judge_sends_nothing_and_is_no_gate_evidence(
    catalogue: Catalogue, tmp_path: Path, stub: AnthropicStub
) -> None:
    from evalkit.gate import evaluate

    ledger = tmp_path / "r.sqlite"
    judge = "recorded:test-reader"
    assert _cli(catalogue, judge, ledger, "--export-batch", str(tmp_path / "i")) == 0
    lines = _lines(tmp_path / "i")
    assert {x["params"]["model"] for x in lines} == {"test-reader"}
    run_batch(tmp_path / "i", tmp_path / "o", stub.base_url)  # the stub echoes the model
    assert _cli(catalogue, judge, ledger, "--import-batch", str(tmp_path / "o")) == 0
    frame = load_ledger(ledger)
    assert set(frame["backend"]) == {"recorded"} and set(frame["status"]) == {"ok"}
    assert frame["cost_usd"].sum() == 0
    with pytest.raises(Exception, match="sends nothing"):
        judge_cases(catalogue, judge=judge, ledger=tmp_path / "new.sqlite", progress=False)
    verdict = evaluate(frame, catalogue.labels, catalogue, n_resamples=50)
    codes = {r.code for d in verdict.dimensions.values() for r in d.reasons}
    assert "reference_judge" in codes and not verdict.passed


def test_a_batch_file_of_a_rubric_variant_asks_what_a_live_run_asks(tmp_path: Path) -> None:
    """One rule for the dimensions a run judges: a batch file of ``--rubric self_harm=v1``
    without ``--dimensions`` asks self_harm only, as a live run does; with ``--dimensions``
    it asks what they name (the shipped recordings answer all three in one call)."""
    from evalkit.catalogue import load
    from evalkit.judge._requests import dimensions_to_judge
    from evalkit.judging._batch_files import _planned

    cat = load(Path(__file__).resolve().parents[2] / "catalogues")
    variant = {"self_harm": "v1"}
    assert dimensions_to_judge(cat, None, variant) == ["self_harm"]
    assert dimensions_to_judge(cat, None, None) == list(cat.constants.gated_dimensions)
    cases = cat.split("calibration")[:3]
    with Ledger(tmp_path / "l.sqlite") as led:
        for dims, asked in ((None, ["self_harm"]), (["self_harm", "escalation"], None)):
            _, requests = _planned(
                cat, cases, dims, "recorded:llm-reader-2026-12", led, rubric_versions=variant,
                turns="final", together=True, params=None,
            )  # fmt: skip
            asked_for = {d.dimension for r in requests for d in r.dimensions}
            assert asked_for == set(asked or dims or ())
