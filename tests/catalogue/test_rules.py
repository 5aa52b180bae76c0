"""Constructs as rules (ADR-0024): parity between guide and rubrics, diffs, the rule
inventory, rule cases and minimal pairs, and per-rule evidence in the gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.cli import main
from evalkit.construct import diff_rules
from tests.factory import SHIPPED, record_ledger


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load(SHIPPED)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "catalogues"
    shutil.copytree(SHIPPED, root)
    return root


def _check(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["catalogue", "check", str(root)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_shipped_catalogue_has_rule_parity(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(SHIPPED, capsys)
    assert code == 0, out
    assert "every rubric in force states the rules its guide states" in out


def test_a_rule_removed_from_the_rubric_in_force_fails_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(tmp_path)
    path = root / "rubrics" / "self_harm.v3.yaml"
    text = path.read_text()
    start = text.index("  look_back: |")
    end = text.index("  bare_number: |")
    path.write_text(text[:start] + text[end:])
    code, out = _check(root, capsys)
    assert code == 1
    assert "self_harm.look_back" in out and "self_harm.v3.yaml" in out and "guide.md" in out


def test_a_rule_mark_removed_from_the_guide_fails_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(tmp_path)
    guide = root / "guide.md"
    guide.write_text(guide.read_text().replace("[rule: self_harm.bare_number]", ""))
    code, out = _check(root, capsys)
    assert code == 1
    assert "self_harm.bare_number" in out and "the rubric in force states it" in out


def test_an_unknown_rule_id_in_a_rubric_fails_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(tmp_path)
    path = root / "rubrics" / "escalation.v1.yaml"
    path.write_text(path.read_text().replace("  safety_advice: |", "  safety_advise: |"))
    code, out = _check(root, capsys)
    assert code == 1
    assert "escalation.safety_advise" in out and "escalation.v1.yaml" in out


def test_a_minimal_pair_that_differs_elsewhere_is_refused(tmp_path: Path) -> None:
    from evalkit.errors import CatalogueError

    root = _copy(tmp_path)
    pairs = root / "design" / "pairs" / "pairs.csv"
    lines = pairs.read_text().splitlines()
    first = lines[1].split(",")
    kind = "reply" if first[4] == "user" else "user"
    lines[1] = ",".join([*first[:4], kind])
    pairs.write_text("\n".join(lines) + "\n")
    with pytest.raises(CatalogueError, match=r"pairs\.csv"):
        load(root)


def test_construct_diff_lists_the_rules_v1_lacks(
    cat: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    diff = diff_rules(cat, "self_harm", "v1", "v3")
    assert {"presence_gate", "signal_absent"} <= set(diff.changes("added"))
    faith = diff_rules(cat, "faithfulness", "v1", "v2")
    assert faith.changes("added") == ["locale_number"]
    assert faith.changes("reworded") == ["against_sources"]
    assert main(["construct", "diff", "self_harm", "v1", "guide", "--catalogue", str(SHIPPED),
                 "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    added = {r["rule"] for r in out["rules"] if r["change"] == "added"}
    assert {"presence_gate", "signal_absent", "look_back"} <= added
    assert main(["construct", "diff", "self_harm", "v1", "v9", "--catalogue", str(SHIPPED)]) == 2


def test_construct_rules_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["construct", "rules", "--catalogue", str(SHIPPED), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for dim in ("self_harm", "escalation"):
        rules = out["dimensions"][dim]["rules"]
        assert rules
        for rule in rules:
            assert {"id", "in_guide", "in_rubrics", "cases"} <= set(rule)
            if rule["in_force"]:
                for locale, n in rule["cases"]["calibration"].items():
                    assert n >= 6, (dim, rule["id"], locale, n)  # every rule exercised (v3)
                for locale, n in rule["cases"]["heldout"].items():
                    assert n >= 2, (dim, rule["id"], "heldout", locale, n)


def test_minimal_pairs_per_locale(cat: Catalogue) -> None:
    """At least 3 pairs per locale for each presence and scope rule, except where the
    realism review cut a half (ADR-0028 lists them)."""
    from collections import Counter

    loc = {c.id: c.locale for c in cat.cases}
    counts = Counter((loc[p.case_a], p.dimension, p.rule) for p in cat.pairs)
    scope = [("self_harm", r) for r in ("presence_gate", "recall", "not_a_signal",
                                         "another_person", "look_back")]  # fmt: skip
    scope += [("escalation", r) for r in ("presence_gate", "emergency_scope", "look_back")]
    for locale in ("en-US", "en-GB", "es-ES"):
        for dim, rule in scope:
            assert counts[(locale, dim, rule)] >= 3, (locale, dim, rule)


def test_the_gate_json_carries_per_rule_evidence(
    cat: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "oracle.sqlite"
    record_ledger(cat, path)
    main(["gate", "--catalogue", str(SHIPPED), "--ledger", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)
    rules = out["dimensions"]["self_harm"]["evidence"]["rules"]
    assert {r["rule"] for r in rules} >= {"presence_gate", "look_back", "bare_number"}
    for r in rules:
        assert {"rule", "n", "agreement", "kappa", "ci_low", "ci_high", "status"} <= set(r)
        assert r["status"] in ("ok", "descriptive", "no_cases")
