"""Loading a catalogue: the valid path, and every kind of bad input named precisely."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.catalogue import load
from evalkit.errors import CatalogueError
from tests.factory import make_case, write_cases, write_labels

CASES = Path("cases/calibration/en-US/mini.yaml")


def test_valid_catalogue_loads(mini_catalogue: Path) -> None:
    cat = load(mini_catalogue)
    assert [c.id for c in cat.cases] == ["c1", "c2", "c3", "c4"]
    assert len(cat.labels) == 9
    assert cat.constants.bins == ("low", "partial", "high")
    assert cat.rubric("self_harm").version == "v3"
    assert cat.case("c3").onset_turn == 2
    assert cat.case("c3").latest_signal == "masked"
    frame = cat.cases_frame()
    assert list(frame["case_id"]) == ["c1", "c2", "c3", "c4"]
    assert set(cat.resources) == {"en-US", "en-GB", "es-ES"}


def _edit_cases(root: Path, fn: Callable[[list[dict[str, Any]]], None]) -> None:
    path = root / CASES
    data = yaml.safe_load(path.read_text())
    fn(data["cases"])
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))


def _edit_yaml(root: Path, rel: str, fn: Callable[[dict[str, Any]], None]) -> None:
    path = root / rel
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))


def _append_label(root: Path, line: str) -> None:
    with (root / "labels/mini.csv").open("a") as handle:
        handle.write(line + "\n")


def _case0(fn: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda root: _edit_cases(root, lambda cases: fn(cases[0]))


def _case(i: int, fn: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda root: _edit_cases(root, lambda cases: fn(cases[i]))


# Each entry: id, mutation, expected (file fragment, record, field fragment, message fragment).
BAD_INPUTS: list[tuple[str, Callable[[Path], None], tuple[str, str | None, str | None, str]]] = [
    (
        "malformed-yaml",
        lambda r: (r / CASES).write_text("cases:\n  - id: c1\n    turns: [unclosed\n"),
        ("mini.yaml", "line", None, "malformed YAML"),
    ),
    (
        "cases-not-a-list",
        lambda r: (r / CASES).write_text("cases: 3\n"),
        ("mini.yaml", None, "cases", "list under `cases`"),
    ),
    (
        "unknown-field",
        _case0(lambda c: c.update(colour="blue")),
        ("mini.yaml", "c1", "colour", "unknown field"),
    ),
    (
        "missing-field",
        _case0(lambda c: c.pop("template_family")),
        ("mini.yaml", "c1", "template_family", "missing field"),
    ),
    (
        "bad-stratum",
        _case0(lambda c: c.update(stratum="happy")),
        ("mini.yaml", "c1", "stratum", "happy"),
    ),
    ("bad-split", _case0(lambda c: c.update(split="train")), ("mini.yaml", "c1", "split", "train")),
    (
        "bad-emergency-category",
        _case0(lambda c: c.update(emergency_category="urgent")),
        ("mini.yaml", "c1", "emergency_category", "urgent"),
    ),
    (
        "bad-locale-syntax",
        _case0(lambda c: c.update(locale="english")),
        ("mini.yaml", "c1", "locale", "pattern"),
    ),
    (
        "locale-without-resources",
        _case0(lambda c: c.update(locale="fr-FR")),
        ("mini.yaml", "c1", "locale", "no resources row"),
    ),
    (
        "split-folder-mismatch",
        _case0(lambda c: c.update(split="heldout")),
        ("mini.yaml", "c1", "split", "under calibration/"),
    ),
    (
        "duplicate-case-id",
        _case(1, lambda c: c.update(id="c1")),
        ("mini.yaml", "c1", "id", "duplicate case id"),
    ),
    (
        "empty-turns",
        _case0(lambda c: c.update(turns=[])),
        ("mini.yaml", "c1", None, "conversation is empty"),
    ),
    (
        "too-many-turns",
        _case0(lambda c: c.update(turns=c["turns"] * 7)),
        ("mini.yaml", "c1", "turns", "14 turns; a catalogue case holds 2 to 12"),
    ),
    (
        "ends-with-user",
        _case0(lambda c: c["turns"].append({"role": "user", "signal": "none", "text": "and?"})),
        ("mini.yaml", "c1", None, "turns"),
    ),
    (
        "roles-not-alternating",
        _case0(lambda c: c["turns"][1].update(role="user", signal="none")),
        ("mini.yaml", "c1", None, "alternate"),
    ),
    (
        "bad-role",
        _case0(lambda c: c["turns"][0].update(role="system")),
        ("mini.yaml", "c1", "turns.0.role", "system"),
    ),
    (
        "blank-turn-text",
        _case0(lambda c: c["turns"][0].update(text="   ")),
        ("mini.yaml", "c1", "turns.0", "blank"),
    ),
    (
        "user-turn-without-signal",
        _case0(lambda c: c["turns"][0].pop("signal")),
        ("mini.yaml", "c1", "turns.0", "needs a `signal`"),
    ),
    (
        "signal-on-assistant-turn",
        _case0(lambda c: c["turns"][1].update(signal="none")),
        ("mini.yaml", "c1", "turns.1", "must not carry"),
    ),
    (
        "bad-signal-level",
        _case0(lambda c: c["turns"][0].update(signal="scary")),
        ("mini.yaml", "c1", "turns.0.signal", "scary"),
    ),
    (
        "onset-out-of-range",
        _case(2, lambda c: c.update(onset_turn=9)),
        ("mini.yaml", "c3", None, "out of range"),
    ),
    (
        "onset-on-assistant-turn",
        _case(2, lambda c: c.update(onset_turn=1)),
        ("mini.yaml", "c3", None, "assistant turn"),
    ),
    (
        "onset-disagrees-with-signals",
        _case(2, lambda c: c.update(onset_turn=0)),
        ("mini.yaml", "c3", None, "disagrees"),
    ),
    (
        "bad-provenance-date",
        _case0(lambda c: c["provenance"].update(created="yesterday")),
        ("mini.yaml", "c1", "provenance.created", "date"),
    ),
    (
        "source-unknown-kind",
        _case0(lambda c: c["sources"][0].update(kind="tweet")),
        ("mini.yaml", "c1", "sources.0.kind", "tweet"),
    ),
    (
        "repeated-final-user-turn",
        _case(1, lambda c: c["turns"][0].update(text="How much water should I drink a day?")),
        ("mini.yaml", "c2", "turns", "repeats"),
    ),
    (
        "label-unknown-case",
        lambda r: _append_label(r, "c99,self_harm,low,x,"),
        ("mini.csv", "c99", "case_id", "unknown case"),
    ),
    (
        "label-bin-not-frozen",
        lambda r: (
            _append_label(r, "c1,self_harm,medium,x,")
            or (r / "labels/mini.csv").write_text(
                (r / "labels/mini.csv")
                .read_text()
                .replace("c1,self_harm,low,", "c1,self_harm,medium,", 1)
            )
        ),
        ("mini.csv", "c1", "bin", "'medium'"),
    ),
    (
        "label-dimension-undeclared",
        lambda r: _append_label(r, "c1,kindness,low,x,"),
        ("mini.csv", "c1", "dimension", "not a declared dimension"),
    ),
    (
        "label-duplicate",
        lambda r: _append_label(r, "c1,self_harm,high,test-labeler,"),
        ("mini.csv", "c1", "dimension", "second label"),
    ),
    (
        "label-bad-header",
        lambda r: (r / "labels/mini.csv").write_text("id,dim,bin\n"),
        ("mini.csv", "line 1", None, "header"),
    ),
    (
        "label-wrong-column-count",
        lambda r: _append_label(r, "c1,self_harm"),
        ("mini.csv", "line", None, "columns"),
    ),
    (
        "label-missing-labeler",
        lambda r: (r / "labels/mini.csv").write_text(
            (r / "labels/mini.csv")
            .read_text()
            .replace("c2,escalation,high,test-labeler", "c2,escalation,high,")
        ),
        ("mini.csv", "c2", "labeler", "missing labeler"),
    ),
    (
        "faithfulness-label-without-sources",
        lambda r: _append_label(r, "c2,faithfulness,low,x,"),
        ("mini.csv", "c2", "dimension", "no sources"),
    ),
    (
        "calibration-case-unlabelled",
        lambda r: (r / "labels/mini.csv").write_text(
            "\n".join(
                line
                for line in (r / "labels/mini.csv").read_text().splitlines()
                if not line.startswith("c4,escalation")
            )
            + "\n"
        ),
        ("labels", "c4", "escalation", "no label"),
    ),
    (
        "heldout-label-in-labels-folder",
        lambda r: (
            write_cases(
                r,
                "heldout",
                "en-US",
                "ho",
                [
                    make_case(
                        "h1",
                        split="heldout",
                        user=("Is oat milk as good as cow's milk for calcium?",),
                    )
                ],
            ),
            _append_label(r, "h1,self_harm,low,x,"),
        ),
        ("mini.csv", "h1", "case_id", "held-out labels"),
    ),
    (
        "rubric-missing-anchor",
        lambda r: _edit_yaml(
            r, "rubrics/escalation.v1.yaml", lambda d: d["anchors"].pop("partial")
        ),
        ("escalation.v1.yaml", "escalation.v1", "anchors", "no anchor for bin(s) ['partial']"),
    ),
    (
        "rubric-unknown-bin",
        lambda r: _edit_yaml(
            r, "rubrics/escalation.v1.yaml", lambda d: d["anchors"].update(medium="x")
        ),
        ("escalation.v1.yaml", "escalation.v1", "anchors", "unknown bin"),
    ),
    (
        "rubric-gated-without-absent-anchor",
        lambda r: _edit_yaml(
            r, "rubrics/self_harm.v2.yaml", lambda d: d.pop("signal_absent_anchor")
        ),
        ("self_harm.v2.yaml", "self_harm.v2", None, "needs one"),
    ),
    (
        "rubric-file-name-mismatch",
        lambda r: _edit_yaml(r, "rubrics/self_harm.v1.yaml", lambda d: d.update(version="v7")),
        ("self_harm.v1.yaml", "self_harm.v1", None, "file name must be"),
    ),
    (
        "rubric-in-force-missing",
        lambda r: (r / "rubrics/faithfulness.v2.yaml").unlink(),
        ("constants.yaml", None, "rubrics_in_force", "faithfulness.v2.yaml"),
    ),
    (
        "constants-missing",
        lambda r: (r / "constants.yaml").unlink(),
        ("constants.yaml", None, None, "missing"),
    ),
    (
        "constants-unknown-key",
        lambda r: _edit_yaml(r, "constants.yaml", lambda d: d.update(threshold=0.5)),
        ("constants.yaml", None, "threshold", "unknown field"),
    ),
    (
        "constants-threshold-out-of-range",
        lambda r: _edit_yaml(r, "constants.yaml", lambda d: d["gate"].update(threshold=1.5)),
        ("constants.yaml", None, "gate.threshold", "less than or equal"),
    ),
    (
        "framing-file-missing",
        lambda r: (r / "framing.txt").unlink(),
        ("constants.yaml", None, "framing_file", "cannot read"),
    ),
    (
        "resources-duplicate-locale",
        lambda r: _edit_yaml(
            r, "resources.yaml", lambda d: d["locales"].append(dict(d["locales"][0]))
        ),
        ("resources.yaml", "en-US", "locale", "duplicate"),
    ),
    (
        "resources-missing-number",
        lambda r: _edit_yaml(
            r, "resources.yaml", lambda d: d["locales"][1].pop("emergency_number")
        ),
        ("resources.yaml", "en-GB", "emergency_number", "missing field"),
    ),
]


@pytest.mark.parametrize(
    "mutate,expected", [(m, e) for _, m, e in BAD_INPUTS], ids=[name for name, _, _ in BAD_INPUTS]
)
def test_bad_input_is_named(
    mini_catalogue: Path,
    mutate: Callable[[Path], None],
    expected: tuple[str, str | None, str | None, str],
) -> None:
    mutate(mini_catalogue)
    with pytest.raises(CatalogueError) as info:
        load(mini_catalogue)
    file_part, record_part, field_part, message_part = expected
    matches = [
        p
        for p in info.value.problems
        if file_part in p.file
        and (record_part is None or (p.record is not None and record_part in p.record))
        and (field_part is None or (p.field is not None and field_part in p.field))
        and message_part in p.message
    ]
    assert matches, f"no problem matched {expected}; got:\n{info.value}"


def test_at_least_thirty_kinds_of_bad_input() -> None:
    assert len(BAD_INPUTS) >= 30


def test_all_problems_listed_not_only_the_first(mini_catalogue: Path) -> None:
    _edit_cases(
        mini_catalogue, lambda cases: (cases[0].update(colour="x"), cases[1].update(stratum="nope"))
    )
    _append_label(mini_catalogue, "c99,self_harm,low,x,")
    with pytest.raises(CatalogueError) as info:
        load(mini_catalogue)
    text = str(info.value)
    assert "colour" in text and "nope" in text and "c99" in text


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="not found"):
        load(tmp_path / "nowhere")


def test_missing_relative_folder_names_where_it_looked_and_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#28, the working-directory trap: a notebook kernel started in ``notebooks/`` reads
    ``catalogues`` from there. The message names the absolute path looked at, the working
    directory and the fix (the project root, the path, or ``work_from_project_root``)."""
    here = tmp_path / "notebooks"
    here.mkdir()
    monkeypatch.chdir(here)
    with pytest.raises(CatalogueError) as info:
        load()  # the default, "catalogues"
    message = str(info.value)
    assert f"catalogues: catalogue folder not found (looked for {here / 'catalogues'}" in message
    assert f"from the working directory {here})" in message
    assert "run from the project root or pass the catalogue's path" in message
    assert "evalkit.report.work_from_project_root()" in message
    with pytest.raises(CatalogueError, match=r"looked for .*nowhere\); check the path"):
        load(tmp_path / "nowhere")


def test_labels_in_wrong_dimension_for_case_without_sources_is_rejected(
    mini_catalogue: Path,
) -> None:
    write_labels(mini_catalogue, "extra", [("c3", "faithfulness", "low")])
    with pytest.raises(CatalogueError, match="no sources"):
        load(mini_catalogue)
