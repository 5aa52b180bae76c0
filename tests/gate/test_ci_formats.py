"""`evalkit gate --junit/--markdown`: JUnit XML and a Markdown summary for CI."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import mistune
import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.cli import main
from evalkit.gate import DimensionVerdict, GateVerdict, Reason
from evalkit.gate._ci_formats import junit_xml, markdown_summary
from tests.factory import build_balanced, record_ledger

DIMS = ("self_harm", "escalation", "faithfulness")


@pytest.fixture
def world(tmp_path: Path) -> tuple[Catalogue, pd.DataFrame]:
    return build_balanced(tmp_path / "catalogues")


def _gate(cat: Catalogue, ledger: pd.DataFrame, tmp_path: Path, *extra: str) -> int:
    """The gate CLI on a real ledger whose answers are ``ledger``'s bins."""
    path = tmp_path / "ledger.sqlite"
    path.unlink(missing_ok=True)
    answers = {(str(r.case_id), str(r.dimension)): str(r.bin) for r in ledger.itertuples()}
    record_ledger(cat, path, answers)
    return main(["gate", "--catalogue", str(cat.root), "--ledger", str(path), *extra])


def _suites(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return {s.get("name", ""): s for s in root.findall("testsuite")}


def _table(markdown: str) -> dict[str, list[str]]:
    """Rows of the verdict table, by dimension: cells split on unescaped pipes."""
    rows = {}
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith(("| dimension", "| ---")):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0].replace("\\_", "_")] = cells
    return rows


def test_a_failing_gate_writes_one_failing_test_per_failed_dimension(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    cat, ledger = world
    failing = ledger.copy()
    for dim, value in (("escalation", "high"), ("faithfulness", "low")):
        failing.loc[failing["dimension"] == dim, "bin"] = value
    junit, md = tmp_path / "ci" / "gate.xml", tmp_path / "ci" / "gate.md"
    assert _gate(cat, failing, tmp_path, "--junit", str(junit), "--markdown", str(md)) == 1

    suites = _suites(junit)
    dims = suites["evalkit.gate.dimensions"]
    cases = {c.get("name"): c for c in dims.findall("testcase")}
    assert list(cases) == list(DIMS)
    assert (dims.get("tests"), dims.get("failures"), dims.get("errors")) == ("3", "2", "0")
    assert cases["self_harm"].find("failure") is None
    for dim, code in (("escalation", "all_high"), ("faithfulness", "all_low")):
        failure = cases[dim].find("failure")
        assert failure is not None and failure.get("type") == "hard_fail"
        assert "(ADR-0005)" in (failure.get("message") or "")
        assert f"{code}: [hard_fail]" in (failure.text or "")
        assert "docs/adr/0005-relock-gate-hard-fails.md" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in dims.iter("property")}
    assert props["constants_hash"] == cat.constants_hash
    assert props["judge"] == "anthropic:claude-sonnet-4-6" and props["overall"] == "FAIL"

    hard = suites["evalkit.gate.hard_fails"]
    names = sorted(c.get("name", "") for c in hard.findall("testcase"))
    assert any(n.startswith("all_high (") and "escalation" in n for n in names)
    assert any(n.startswith("all_low (") and "faithfulness" in n for n in names)
    assert hard.get("failures") == hard.get("tests") == str(len(names))
    assert all(c.find("failure") is not None for c in hard.findall("testcase"))

    text = md.read_text(encoding="utf-8")
    rows = _table(text)
    assert set(rows) == set(DIMS)
    assert rows["self_harm"][1].startswith("PASS") and rows["escalation"][1].startswith("FAIL")
    assert "all\\_high (ADR-0005)" in rows["escalation"][5]
    assert text.startswith("### evalkit gate: FAIL")
    html = mistune.create_markdown(escape=False, plugins=["table"])(text)
    assert isinstance(html, str)
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == 3 and body.count("<td") == 18


def test_a_passing_gate_writes_passing_reports(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    cat, ledger = world
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    assert _gate(cat, ledger, tmp_path, "--junit", str(junit), "--markdown", str(md)) == 0
    suites = _suites(junit)
    assert suites["evalkit.gate.dimensions"].get("failures") == "0"
    assert suites["evalkit.gate.hard_fails"].get("tests") == "0"
    assert all(r[1].startswith("PASS") for r in _table(md.read_text()).values())


def test_no_report_on_unusable_input_and_none_left_from_before(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    cat, ledger = world
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    assert _gate(cat, ledger, tmp_path, "--junit", str(junit), "--markdown", str(md)) == 0
    missing = ["--ledger", str(tmp_path / "missing.sqlite")]
    args = ["gate", "--catalogue", str(cat.root), *missing, "--junit", str(junit)]
    assert main([*args, "--markdown", str(md)]) == 2
    assert not junit.exists() and not md.exists()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    code = _gate(cat, ledger, tmp_path, "--junit", str(folder), "--markdown", str(md))
    assert code == 2 and not md.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder", "catalogues", "ledger.sqlite"]


def test_case_derived_text_is_escaped() -> None:
    evil = "case x| <script>alert(1)</script> **bold** @team [link](javascript:x)\x07\nnext"
    reason = Reason("recall_regression", "hard_fail", evil, "adr-0002")
    dim = DimensionVerdict("self_harm", "FAIL", 0.5, 0.4, 0.6, 50, (reason,), threshold=0.6)
    verdict = GateVerdict("FAIL", {"self_harm": dim}, {"constants_hash": "c" * 64}, {})
    text = markdown_summary(verdict)
    html = mistune.create_markdown(escape=False, plugins=["table"])(text)
    assert isinstance(html, str)
    assert "<script" not in html and "<strong>bold" not in html and "<a " not in html
    assert "@team" not in text and "&lt;script&gt;" in html and "@team" in html
    assert "case x\\| " in text and "case x| &lt;script&gt;" in html
    assert "\x07" not in text and text.count("\n- **hard_fail**") == 1
    root = ET.fromstring(junit_xml(verdict).encode())  # the bell would not parse unreplaced
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and "<script>alert(1)</script>" in (failure.get("message") or "")
