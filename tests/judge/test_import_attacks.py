"""A JSONL export is validated like a live answer before a single row of it is imported.

The fault hunt's attack: delete the results of the records the judge got wrong, keep
``status: ok``, import with ``--judge replay --import-jsonl``. Each test tampers with one
line of an honest export and checks that the import is refused with the file, line and
field named, and that nothing is written: an existing ledger keeps its row count, and a
ledger that did not exist is not created.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import Catalogue
from evalkit.cli import main
from evalkit.errors import LedgerError
from evalkit.judge import Ledger, import_jsonl, judge_cases, load_ledger

Record = dict[str, Any]


@pytest.fixture
def export(catalogue: Catalogue, tmp_path: Path) -> list[Record]:
    """The honest export of a baseline run, oldest first (5 ok records)."""
    ledger = tmp_path / "honest.sqlite"
    judge_cases(catalogue, judge="baseline", ledger=ledger, progress=False)
    with Ledger(ledger) as led:
        led.export_jsonl(tmp_path / "honest.jsonl")
    lines = (tmp_path / "honest.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def write(path: Path, records: list[Record]) -> Path:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return path


def rows(ledger: Path) -> tuple[int, int]:
    db = sqlite3.connect(ledger)
    try:
        counts = [
            db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("requests", "results")
        ]
    finally:
        db.close()
    return counts[0], counts[1]


def _other_case(rec: Record, catalogue: Catalogue) -> None:
    """Move the answer to another case of the same length (same scored turn)."""
    n = len(catalogue.case(rec["case_id"]).turns)
    rec["case_id"] = next(
        c.id for c in catalogue.cases if c.id != rec["case_id"] and len(c.turns) == n
    )


def _drop_result(rec: Record, catalogue: Catalogue) -> None:
    rec["results"] = rec["results"][:-1]


def _set(field: str, value: Any) -> Callable[[Record, Catalogue], None]:
    def change(rec: Record, catalogue: Catalogue) -> None:
        rec[field] = value

    return change


def _result(field: str, value: Any) -> Callable[[Record, Catalogue], None]:
    def change(rec: Record, catalogue: Catalogue) -> None:
        rec["results"][0][field] = value

    return change


def _dimension(field: str, value: Any) -> Callable[[Record, Catalogue], None]:
    def change(rec: Record, catalogue: Catalogue) -> None:
        rec["dimensions"][0][field] = value

    return change


def _drop(field: str) -> Callable[[Record, Catalogue], None]:
    def change(rec: Record, catalogue: Catalogue) -> None:
        del rec[field]

    return change


TAMPERING: dict[str, tuple[Callable[[Record, Catalogue], None], str]] = {
    "results deleted, status ok": (_set("results", []), r"results: no entry for dimension"),
    "one result deleted": (_drop_result, r"results: no entry for dimension"),
    "bin outside the frozen bins": (_result("bin", "extreme"), r"results: results\[0\]: bin"),
    "bin in capitals": (_result("bin", "HIGH"), r"results: results\[0\]: bin 'HIGH'"),
    "injection_attempt a string": (_result("injection_attempt", "false"), "injection_attempt"),
    "evidence_turns ints": (_result("evidence_turns", [1]), "evidence_turns is not an array"),
    "evidence of a turn not shown": (_result("evidence_turns", ["t99"]), "not turns shown"),
    "blank rationale": (_result("rationale", "  "), "rationale is missing or blank"),
    "presence-gated without signal": (  # results[0] is escalation, presence-gated
        _result("signal_present", None),
        "escalation is presence-gated",
    ),
    "extra result key": (_result("confidence", 0.9), "unexpected keys"),
    "results on a refused request": (_set("status", "refused"), "a refused request has no results"),
    "unknown status": (_set("status", "great"), r"status: 'great' is not one of"),
    "request_key not hex": (_set("request_key", "k" * 64), "request_key: 'k"),
    "request_id not the key's": (_set("request_id", "00000000"), "request_id: '00000000'"),
    "content_key of another request": (
        _set("content_key", "0" * 64),
        "content_key: is not the key",
    ),
    "answer moved to another case": (_other_case, "content_key: is not the key"),
    "turn that is a user turn": (_set("turn", 0), r"turn: .*not an assistant turn"),
    "model changed, key kept": (_set("model", "gpt-omega"), "request_key: is not the key"),
    "rubric_hash of another rubric": (
        _dimension("rubric_hash", "3" * 64),
        r"dimensions\[0\]\.rubric_hash: is not the hash",
    ),
    "presence_gated a string": (_dimension("presence_gated", "yes"), "presence_gated: 'yes'"),
    "no dimensions": (_set("dimensions", []), "dimensions: is not a non-empty array"),
    "negative tokens": (_set("input_tokens", -5), "input_tokens: -5 is not an integer >= 0"),
    "tokens a float": (_set("output_tokens", 5.0), "output_tokens: 5.0 is not an integer"),
    "boolean tokens": (_set("cache_read_tokens", True), "cache_read_tokens: True"),
    "negative cost": (_set("cost_usd", -1.0), "cost_usd: -1.0 is not a non-negative number"),
    "no attempts": (_set("attempts", 0), "attempts: 0 is not an integer >= 1"),
    "latency a string": (_set("latency_s", "fast"), "latency_s: 'fast'"),
    "created_at not a time": (_set("created_at", "yesterday"), "created_at: 'yesterday'"),
    "turn negative": (_set("turn", -1), "turn: -1 is not an integer >= 0"),
    "nonce not hex": (_set("nonce", "n" * 16), "nonce: 'nnnn"),
    "framing_hash short": (_set("framing_hash", "ab"), "framing_hash: 'ab'"),
    "params not an object": (_set("params", [1]), "params: list is not an object"),
    "dropped column": (_drop("latency_s"), "latency_s: is missing"),
    "dropped results": (_drop("results"), "results: is missing"),
    "unknown column": (_set("verdict", "pass"), "verdict: is not a ledger field"),
}


@pytest.mark.parametrize("name", list(TAMPERING))
def test_a_tampered_line_is_refused_and_nothing_is_written(
    name: str, export: list[Record], catalogue: Catalogue, tmp_path: Path
) -> None:
    change, match = TAMPERING[name]
    change(export[2], catalogue)
    path = write(tmp_path / "tampered.jsonl", export)
    existing = tmp_path / "existing.sqlite"
    with Ledger(existing) as led:
        led.record({**export[0], "status": "error", "results": [], "error": "HTTP 500"})
    before = rows(existing)
    with Ledger(existing) as led, pytest.raises(LedgerError) as err:
        led.import_jsonl(path, catalogue=catalogue)
    text = str(err.value)
    assert f"{path} [line 3] " in text and "nothing read" in text
    assert re.search(match, text), text
    assert rows(existing) == before  # the error row is not even replaced by line 1
    fresh = tmp_path / "fresh.sqlite"
    with pytest.raises(LedgerError):
        import_jsonl(fresh, path, catalogue=catalogue)
    assert not fresh.exists()


def test_the_fault_hunt_attack_through_the_cli(
    export: list[Record], catalogue: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for rec in export:  # "delete the results of every disagreeing record, keep status ok"
        if rec["case_id"] in ("j-masked", "j-explicit-gb"):
            rec["results"] = []
    path = write(tmp_path / "tampered.jsonl", export)
    ledger = tmp_path / "replay.sqlite"
    code = main(["judge", "--judge", "replay", "--import-jsonl", str(path), "--ledger",
                 str(ledger), "--catalogue", str(catalogue.root)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "2 problem(s), nothing read" in err and "Traceback" not in err
    assert not ledger.exists()  # a refused import does not leave a ledger behind


def test_malformed_lines_anywhere_mean_nothing_is_imported(
    export: list[Record], catalogue: Catalogue, tmp_path: Path
) -> None:
    good = [json.dumps(r, sort_keys=True) for r in export]
    dup = json.dumps(export[1], sort_keys=True)
    cases = {
        "half a line": ([*good[:3], good[3][:40], *good[4:]], r"\[line 4\]: not a JSON record"),
        "not an object": ([*good[:4], "[1, 2]"], r"\[line 5\] record: a list, not an object"),
        "duplicate JSON key": (
            [*good[:1], '{"status": "ok", ' + good[1][1:], *good[2:]],
            r"\[line 2\]: not a JSON record \(duplicate key 'status'",
        ),
        "NaN": ([*good[:2], good[2].replace('"latency_s": ', '"latency_s": NaN, "x": ')],
                r"\[line 3\]: not a JSON record"),
        "same request twice": ([*good, dup], r"\[line 6\] request_key: already on line 2"),
    }  # fmt: skip
    ledger = tmp_path / "l.sqlite"
    Ledger(ledger).close()
    for name, (lines, match) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(LedgerError, match=match):
            import_jsonl(ledger, path, catalogue=catalogue)
        assert rows(ledger) == (0, 0), name


def test_every_problem_is_listed_up_to_a_limit(
    export: list[Record], catalogue: Catalogue, tmp_path: Path
) -> None:
    for rec in export:
        rec["input_tokens"] = -1
        rec["cost_usd"] = -1
    path = write(tmp_path / "t.jsonl", export * 3)  # 15 lines, 2 problems each
    with pytest.raises(LedgerError) as err:
        import_jsonl(tmp_path / "l.sqlite", path, catalogue=catalogue)
    text = str(err.value)
    assert "30 problem(s)" in text and "... and 10 more" in text
    assert text.count("input_tokens: -1") == 10


def test_an_honest_export_imports_whole_and_replays(
    export: list[Record], catalogue: Catalogue, tmp_path: Path
) -> None:
    path = write(tmp_path / "honest.jsonl", export)
    ledger = tmp_path / "l.sqlite"
    assert import_jsonl(ledger, path, catalogue=catalogue) == {
        "added": 5,
        "identical": 0,
        "kept": 0,
    }
    assert rows(ledger) == (5, 11)
    replayed = judge_cases(catalogue, judge="replay", ledger=ledger, progress=False)
    assert (replayed["status"] == "ok").all() and len(replayed) == 11


def test_foreign_rows_are_imported_without_key_checks(
    export: list[Record], catalogue: Catalogue, tmp_path: Path
) -> None:
    """Under other constants the keys cannot be rebuilt; the row is kept, and the gate
    does not count it (its hashes are not those in force); bins are still checked."""
    export[0]["constants_hash"] = "4" * 64
    export[0]["content_key"] = "5" * 64
    export[1]["case_id"] = "a-case-from-another-catalogue"
    path = write(tmp_path / "foreign.jsonl", export)
    ledger = tmp_path / "l.sqlite"
    assert import_jsonl(ledger, path, catalogue=catalogue)["added"] == 5
    export[0]["results"][0]["bin"] = "extreme"
    with pytest.raises(LedgerError, match=r"\[line 1\] results: results\[0\]: bin 'extreme'"):
        import_jsonl(ledger, write(tmp_path / "f2.jsonl", export), catalogue=catalogue)


def test_loading_a_tampered_export_is_refused_too(export: list[Record], tmp_path: Path) -> None:
    """``load_ledger`` on an export (the gate's ``--ledger x.jsonl``) applies the same
    rules, except the bins, which need the catalogue."""
    export[3]["results"] = []
    with pytest.raises(LedgerError, match=r"\[line 4\] results: no entry for dimension"):
        load_ledger(write(tmp_path / "t.jsonl", export))
    export[3]["status"] = "unparseable"
    assert len(load_ledger(write(tmp_path / "u.jsonl", export))) == 11


def test_a_heldout_export_imports_with_its_seal_and_the_seal_is_checked(tmp_path: Path) -> None:
    """A held-out request's key holds the seal it was judged under (ADR-0015): an honest
    export imports, one whose seal was swapped does not."""
    from evalkit.catalogue import load
    from tests.heldout.world import cli, fill, template, with_heldout

    cat = with_heldout(tmp_path)
    labels = fill(template(cat), cat.root / "heldout" / "labels.csv")
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    assert (
        cli("heldout", "--catalogue", cat.root, "seal", labels, "--ledger-dir", ledgers).code == 0
    )
    ledger = ledgers / "judge.sqlite"
    run = cli("judge", "--judge", "baseline", "--split", "heldout", "--quiet", "--ledger",
              ledger, "--catalogue", cat.root, "--export-jsonl", tmp_path / "ho.jsonl")  # fmt: skip
    assert run.code == 0, run.err
    sealed = load(cat.root)
    records = [json.loads(x) for x in (tmp_path / "ho.jsonl").read_text().splitlines()]
    assert records and all(r["params"].get("heldout_seal") for r in records)
    assert import_jsonl(tmp_path / "copy.sqlite", tmp_path / "ho.jsonl", catalogue=sealed) == {
        "added": len(records), "identical": 0, "kept": 0,
    }  # fmt: skip
    records[0]["params"]["heldout_seal"] = "0" * 64
    with pytest.raises(LedgerError, match=r"\[line 1\] request_key: is not the key"):
        import_jsonl(tmp_path / "x.sqlite", write(tmp_path / "t.jsonl", records), catalogue=sealed)
