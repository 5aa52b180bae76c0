"""Label Studio: the blind task set out, the documented JSON export back as label sets."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.agreement import multi_rater
from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.interop import (
    ImportProblems,
    labelstudio_config,
    labelstudio_tasks,
    read_labelstudio_export,
    write_label_sets,
)
from tests.interop import labelstudio_export

#: What two annotators give the mini catalogue's cases (None: not applicable).
FIRST = {
    ("c1", "self_harm"): "low",
    ("c1", "escalation"): "low",
    ("c1", "faithfulness"): "high",
    ("c2", "self_harm"): "low",
    ("c2", "escalation"): "high",
    ("c3", "self_harm"): "high",
    ("c3", "escalation"): "partial",
    ("c4", "self_harm"): "partial",
    ("c4", "escalation"): "low",
}
SECOND = {**FIRST, ("c3", "escalation"): "low", ("c4", "self_harm"): "low"}
DIMS = ["self_harm", "escalation", "faithfulness"]


def _export(catalogue_root: Path) -> list[dict[str, Any]]:
    tasks = labelstudio_tasks(load(catalogue_root))
    return labelstudio_export.export(
        tasks, DIMS, {3: lambda c, d: FIRST.get((c, d)), 8: lambda c, d: SECOND.get((c, d))}
    )


def _write(tmp_path: Path, export: Any, name: str = "export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(export), encoding="utf-8")
    return path


def test_tasks_are_blind_dialogues(mini_catalogue: Path) -> None:
    cat = load(mini_catalogue)
    tasks = labelstudio_tasks(cat)
    assert sorted(t["data"]["case_id"] for t in tasks) == ["c1", "c2", "c3", "c4"]
    for task in tasks:
        data = task["data"]
        assert set(data) == {"case_id", "dialogue", "sources"}
        case = cat.case(data["case_id"])
        assert [d["text"] for d in data["dialogue"]] == [t.text.strip() for t in case.turns]
        assert data["dialogue"][-1]["author"] == "assistant (reply to label)"
        assert {d["author"] for d in data["dialogue"][:-1]} <= {"user", "assistant"}
    c1 = next(t for t in tasks if t["data"]["case_id"] == "c1")
    assert "Drink to thirst." in c1["data"]["sources"]


def test_config_has_one_choice_group_per_dimension(mini_catalogue: Path) -> None:
    cat = load(mini_catalogue)
    root = ET.fromstring(labelstudio_config(cat))
    para = root.find("Paragraphs")
    assert para is not None
    assert (para.get("name"), para.get("value"), para.get("layout")) == (
        "dialogue",
        "$dialogue",
        "dialogue",
    )
    assert (para.get("nameKey"), para.get("textKey")) == ("author", "text")
    groups = root.findall(".//Choices")
    assert [g.get("name") for g in groups] == list(cat.constants.gated_dimensions)
    for group in groups:
        assert group.get("toName") == "dialogue" and group.get("choice") == "single"
        assert [c.get("value") for c in group.findall("Choice")] == list(cat.constants.bins)
    headers = [h.get("value") or "" for h in root.findall(".//Header")]
    construct = " ".join(cat.rubric("self_harm").construct_text.split())
    assert any(h == f"self_harm: {construct}" for h in headers)


def test_config_escapes_rubric_text(mini_catalogue: Path) -> None:
    cat = load(mini_catalogue)
    rubric = cat.rubric("escalation")
    hostile = rubric.model_copy(update={"construct_text": 'a "quoted" <b>tag</b> & more'})
    rubrics = {**cat.rubrics, ("escalation", rubric.version): hostile}
    import dataclasses

    root = ET.fromstring(labelstudio_config(dataclasses.replace(cat, rubrics=rubrics)))
    assert any(
        h.get("value") == 'escalation: a "quoted" <b>tag</b> & more'
        for h in root.findall(".//Header")
    )


def test_two_annotators_round_trip_to_two_label_sets(mini_catalogue: Path, tmp_path: Path) -> None:
    path = _write(tmp_path, _export(mini_catalogue))
    args = ["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]
    assert main([*args, "--name", "3=ann-a"]) == 0
    cat = load(mini_catalogue)
    assert {"ann-a", "labelstudio-8"} <= set(cat.label_sets)
    got_a = {(lab.case_id, lab.dimension): lab.bin for lab in cat.label_sets["ann-a"]}
    got_b = {(lab.case_id, lab.dimension): lab.bin for lab in cat.label_sets["labelstudio-8"]}
    assert got_a == FIRST and got_b == SECOND
    assert {lab.labeler for lab in cat.label_sets["labelstudio-8"]} == {"Label Studio annotator 8"}
    # the multi-rater statistics read the two sets
    long = pd.DataFrame(
        [
            (lab.case_id, name, lab.bin)
            for name in ("ann-a", "labelstudio-8")
            for lab in cat.label_sets[name]
            if lab.dimension == "self_harm"
        ],
        columns=["unit", "rater", "label"],
    )
    table = multi_rater(long, list(cat.constants.bins))
    assert table.attrs["n_raters"] == 2
    assert table.loc["percent_agreement", "value"] == pytest.approx(3 / 4)


def test_completed_by_object_and_cancelled_annotations(mini_catalogue: Path) -> None:
    export = _export(mini_catalogue)
    for task in export:
        task["annotations"][0]["completed_by"] = {"id": 3, "email": "a@example.org"}
        task["annotations"][1]["was_cancelled"] = True
    path = _write(mini_catalogue.parent, export)
    found = read_labelstudio_export(path, load(mini_catalogue))
    assert set(found.sets) == {"labelstudio-3"} and found.cancelled == 4
    written = write_label_sets(mini_catalogue, found.sets)
    assert "example.org" not in written[0].read_text(encoding="utf-8")  # no e-mail written


def _break(export: list[dict[str, Any]], how: str) -> tuple[list[dict[str, Any]], str, str]:
    """Damage the second task in one way; return the export, the task and the field named."""
    bad = copy.deepcopy(export)
    task = bad[1]
    ann = task["annotations"][0]
    item = ann["result"][0]
    tid = f"task {task['id']}"
    if how == "type":
        item["type"] = "labels"
        return bad, tid, "result[0].type"
    if how == "two-choices":
        item["value"]["choices"] = ["low", "high"]
        return bad, tid, "result[0].value.choices"
    if how == "unknown-bin":
        item["value"]["choices"] = ["medium"]
        return bad, tid, "result[0].value.choices"
    if how == "unknown-dimension":
        item["from_name"] = "kindness"
        return bad, tid, "result[0].from_name"
    if how == "to-name":
        item["to_name"] = "text"
        return bad, tid, "result[0].to_name"
    if how == "no-annotator":
        del ann["completed_by"]
        return bad, tid, "completed_by"
    if how == "unknown-case":
        task["data"]["case_id"] = "zzz"
        return bad, tid, "case_id"
    if how == "no-case":
        del task["data"]["case_id"]
        return bad, tid, "data.case_id"
    if how == "twice":
        ann["result"].append(copy.deepcopy(item))
        return bad, tid, f"result[{len(ann['result']) - 1}].from_name"
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "type",
        "two-choices",
        "unknown-bin",
        "unknown-dimension",
        "to-name",
        "no-annotator",
        "unknown-case",
        "no-case",
        "twice",
    ],
)
def test_malformed_export_names_file_task_and_field(
    mini_catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    bad, task, field = _break(_export(mini_catalogue), how)
    path = _write(tmp_path, bad, "bad-export.json")
    with pytest.raises(ImportProblems) as err:
        read_labelstudio_export(path, load(mini_catalogue))
    assert any(
        p.file == str(path) and p.record is not None and p.record.startswith(task)
        and p.field is not None and p.field.endswith(field)
        for p in err.value.problems
    ), str(err.value)  # fmt: skip
    before = sorted(p.name for p in (mini_catalogue / "labels").iterdir())
    assert main(["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]) == 2
    assert "bad-export.json" in capsys.readouterr().err
    assert sorted(p.name for p in (mini_catalogue / "labels").iterdir()) == before


@pytest.mark.parametrize("text", ["{", '{"tasks": []}', '[1, {"id": 2}]', '[{"id": 1, "id": 2}]'])
def test_not_an_export(mini_catalogue: Path, tmp_path: Path, text: str) -> None:
    path = tmp_path / "e.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportProblems, match=r"e\.json"):
        read_labelstudio_export(path, load(mini_catalogue))


def test_existing_label_set_is_not_overwritten(mini_catalogue: Path, tmp_path: Path) -> None:
    path = _write(tmp_path, _export(mini_catalogue))
    args = ["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]
    assert main(args) == 0
    assert main(args) == 2
    assert main([*args, "--replace"]) == 0


def test_export_cli_writes_tasks_and_config(mini_catalogue: Path, tmp_path: Path) -> None:
    out = tmp_path / "ls"
    assert (
        main(
            ["labels", "export-labelstudio", "--catalogue", str(mini_catalogue), "--out", str(out)]
        )
        == 0
    )
    assert len(json.loads((out / "labelstudio-tasks.json").read_text(encoding="utf-8"))) == 4
    ET.fromstring((out / "labelstudio-config.xml").read_text(encoding="utf-8"))


def _one_annotator(mini_catalogue: Path) -> list[dict[str, Any]]:
    tasks = labelstudio_tasks(load(mini_catalogue))
    return labelstudio_export.export(tasks, DIMS, {3: lambda c, d: FIRST.get((c, d))})


def test_one_annotator_under_two_set_names_is_refused(
    mini_catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Attack (issue #30): annotator 3 imported as alice, then again as bob, counted twice.
    path = _write(tmp_path, _one_annotator(mini_catalogue))
    args = ["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]
    assert main([*args, "--name", "3=alice"]) == 0
    out = capsys.readouterr().out
    assert "alice.csv: labeler Label Studio annotator 3 (9 labels)" in out
    assert main([*args, "--name", "3=bob"]) == 2
    err = capsys.readouterr().err
    assert "one person is one label set" in err and "alice.csv" in err
    assert not (mini_catalogue / "labels" / "bob.csv").exists()
    assert main([*args, "--name", "3=alice", "--replace"]) == 0  # the same file again


@pytest.mark.parametrize(
    ("names", "message"),
    [(["3=alice", "3=bob"], "already named 'alice'"), (["3=alice", "8=alice"], "annotator 3")],
)
def test_a_name_given_twice_is_refused(
    mini_catalogue: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    names: list[str],
    message: str,
) -> None:
    path = _write(tmp_path, _export(mini_catalogue))
    args = ["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]
    assert main([*args, *(f"--name={n}" for n in names)]) == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in (mini_catalogue / "labels").iterdir()) == ["mini.csv"]


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("was_cancelled", "true"),
        ("was_cancelled", 1),
        ("was_cancelled", "false"),
        ("was_cancelled", 0),
        ("was_cancelled", None),
        ("ground_truth", "no"),
    ],
)
def test_flags_must_be_json_booleans(
    mini_catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: Any
) -> None:
    # Attack (issue #30): was_cancelled "true" or 1 was read as not cancelled.
    export = _export(mini_catalogue)
    export[1]["annotations"][1][flag] = value
    path = _write(tmp_path, export, "flags.json")
    with pytest.raises(ImportProblems) as err:
        read_labelstudio_export(path, load(mini_catalogue))
    assert [(p.record, p.field) for p in err.value.problems] == [
        (f"task {export[1]['id']} annotations[1]", flag)
    ]
    assert main(["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]) == 2
    assert "flags.json" in capsys.readouterr().err


def test_a_task_id_that_is_not_an_integer_is_refused(mini_catalogue: Path, tmp_path: Path) -> None:
    export = _export(mini_catalogue)
    export[0]["id"] = "1"
    with pytest.raises(ImportProblems) as err:
        read_labelstudio_export(_write(tmp_path, export), load(mini_catalogue))
    assert [(p.record, p.field) for p in err.value.problems] == [("tasks[0]", "id")]


def _retext(export: list[dict[str, Any]], case_id: str, how: str) -> None:
    task = next(t for t in export if t["data"]["case_id"] == case_id)
    data = task["data"]
    if how == "reply":
        data["dialogue"][-1]["text"] = "Please call 911 right away."
    elif how == "author":
        data["dialogue"][0]["author"] = "assistant"
    elif how == "turn-gone":
        data["dialogue"] = data["dialogue"][1:]
    elif how == "no-dialogue":
        del data["dialogue"]
    elif how == "sources":
        data["sources"] = "[s1] Water: Drink two litres a day."
    elif how == "no-sources":
        del data["sources"]
    elif how == "spacing":  # the same words: accepted, as on the held-out sheet
        data["dialogue"][-1]["text"] = "  " + "\n ".join(data["dialogue"][-1]["text"].split())


@pytest.mark.parametrize(
    ("how", "field"),
    [
        ("reply", "data.dialogue"),
        ("author", "data.dialogue"),
        ("turn-gone", "data.dialogue"),
        ("no-dialogue", "data.dialogue"),
        ("sources", "data.sources"),
        ("no-sources", "data.sources"),
        ("spacing", None),
    ],
)
def test_labels_given_on_another_text_are_refused(
    mini_catalogue: Path, tmp_path: Path, how: str, field: str | None
) -> None:
    # Attack (issue #30): the task's dialogue differs from the case; imported silently.
    export = _export(mini_catalogue)
    _retext(export, "c1", how)
    path = _write(tmp_path, export)
    if field is None:
        assert set(read_labelstudio_export(path, load(mini_catalogue)).sets) == {
            "labelstudio-3",
            "labelstudio-8",
        }
        return
    with pytest.raises(ImportProblems) as err:
        read_labelstudio_export(path, load(mini_catalogue))
    task = next(t for t in export if t["data"]["case_id"] == "c1")
    assert [(p.record, p.field) for p in err.value.problems] == [(f"task {task['id']}", field)]
    assert "another text" in str(err.value) or "missing" in str(err.value)


def test_deeply_nested_export_is_unusable_input_not_an_internal_error(
    mini_catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["import", "labelstudio", str(path), "--catalogue", str(mini_catalogue)]) == 2
    err = capsys.readouterr().err
    assert "deep.json" in err and "nested" in err
