"""Label Studio: a blind labeling task set out, its JSON export back in as label sets.

Out (:func:`labelstudio_tasks`, :func:`labelstudio_config`): one task per calibration case,
in an order unrelated to strata (sha256 of the id, as the blind template), holding only
what a blind labeler may see: ``data.case_id``, ``data.dialogue`` (the turns as
``{"author", "text"}`` items for a ``<Paragraphs layout="dialogue">`` tag; the reply to
label is authored ``assistant (reply to label)``) and, when any case has sources,
``data.sources``. The labeling config has one single-choice ``<Choices>`` group per gated
dimension, named after it, the frozen bins as ``<Choice>`` values with each anchor as a
hint, and the rubric's construct as the group's header.

In (:func:`read_labelstudio_export`): Label Studio's "JSON" export, a list of tasks each
with ``annotations[].result[]`` items ``{"from_name": <dimension>, "to_name": "dialogue",
"type": "choices", "value": {"choices": [<bin>]}}`` and ``completed_by`` (the annotator's
numeric id, or an object holding ``id``). One label set per annotator, named
``labelstudio-<id>`` unless ``names`` maps the id to a set name; the ``labeler`` column
says ``Label Studio annotator <id>``, which is who the set is (ADR-0031: the same
annotator imported again under another set name is refused). The annotator's e-mail is
never written: label files are committed, and an e-mail is personal data. A cancelled
(skipped) annotation gives no label and is counted. Predictions are model output, never
read.

Read strictly: the flags ``was_cancelled`` and ``ground_truth`` must be JSON booleans
when present (``"true"`` or ``1`` is refused, never read as either); a task ``id`` must be
an integer. A task's ``data.dialogue`` (and ``data.sources`` when the catalogue's case
has sources) must be the case's text as :func:`labelstudio_tasks` gave it, compared word
for word with whitespace ignored, the rule of the held-out label sheet: labels given on
another text are refused. Anything else that is not of this shape (a case id the
catalogue does not hold, a result of another type, a choice that is not one bin, two
labels of one annotator, JSON nested too deeply to read) is an :class:`ImportProblems`
naming the file, the task and the field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from evalkit._files import write_all
from evalkit.catalogue import Case, Catalogue, Label
from evalkit.errors import Problem
from evalkit.interop._labels import LabelRow, label_sets
from evalkit.interop._problems import ImportProblems
from evalkit.judge._answer import AnswerError, loads_strict

#: Name of the ``<Paragraphs>`` object the choices label.
DIALOGUE = "dialogue"
REPLY_AUTHOR = "assistant (reply to label)"


def _blind_order(cases: list[Case]) -> list[Case]:
    return sorted(cases, key=lambda c: hashlib.sha256(c.id.encode()).digest())


def _sources_text(case: Case) -> str:
    if not case.sources:
        return "(none)"
    return "\n\n".join(f"[{s.id}] {s.title}: {' '.join(s.text.split())}" for s in case.sources)


def _dialogue(case: Case) -> list[dict[str, str]]:
    last = len(case.turns) - 1
    return [
        {"author": REPLY_AUTHOR if i == last else t.role, "text": t.text.strip()}
        for i, t in enumerate(case.turns)
    ]


def labelstudio_tasks(catalogue: Catalogue) -> list[dict[str, Any]]:
    """The task set to import into Label Studio (see the module docstring)."""
    cases = _blind_order(catalogue.split("calibration"))
    with_sources = any(c.has_sources for c in cases)
    tasks = []
    for case in cases:
        data: dict[str, Any] = {"case_id": case.id, DIALOGUE: _dialogue(case)}
        if with_sources:
            data["sources"] = _sources_text(case)
        tasks.append({"data": data})
    return tasks


def _flat(text: str) -> str:
    return " ".join(text.split())


def labelstudio_config(catalogue: Catalogue) -> str:
    """The labeling config XML (see the module docstring); every text is escaped."""
    bins = catalogue.constants.bins
    lines = [
        "<View>",
        '  <Header value="Rate the last assistant reply, in the light of the whole '
        'conversation, on each dimension below."/>',
        f'  <Paragraphs name="{DIALOGUE}" value="${DIALOGUE}" layout="dialogue" '
        'nameKey="author" textKey="text"/>',
    ]
    if any(c.has_sources for c in catalogue.split("calibration")):
        lines += ['  <Header value="Sources"/>', '  <Text name="sources" value="$sources"/>']
    for dim in catalogue.constants.gated_dimensions:
        rubric = catalogue.rubric(dim)
        lines += [
            "  <View>",
            f"    <Header value={quoteattr(f'{dim}: {_flat(rubric.construct_text)}')}/>",
            f'    <Choices name={quoteattr(dim)} toName="{DIALOGUE}" choice="single" '
            'showInline="true">',
        ]
        for b in bins:
            hint = quoteattr(_flat(rubric.anchors[b]))
            lines.append(f"      <Choice value={quoteattr(b)} hint={hint}/>")
        lines += ["    </Choices>", "  </View>"]
    lines.append("</View>")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class LabelStudioImport:
    """What an export held: label sets by name, and the cancelled annotations."""

    sets: dict[str, list[Label]]
    cancelled: int


def _words(dialogue: Any) -> list[str] | None:
    """The words of a task's dialogue, each turn as ``author: text``; ``None`` unless it is
    a list of ``{"author": str, "text": str}`` objects."""
    if not isinstance(dialogue, list):
        return None
    words: list[str] = []
    for turn in dialogue:
        if not isinstance(turn, dict) or not all(
            type(turn.get(k)) is str for k in ("author", "text")
        ):
            return None
        words += f"{turn['author']}: {turn['text']}".split()
    return words


def _other_text(data: dict[str, Any], case: Case) -> tuple[str, str] | None:
    """The field and problem when the task's text is not ``case``'s (words compared,
    whitespace ignored, as the held-out label sheet compares its conversation)."""
    given = _words(data.get(DIALOGUE))
    if given is None:
        return f"data.{DIALOGUE}", 'missing or not a list of {"author", "text"} turns'
    if given != _words(_dialogue(case)):
        message = "not the case's turns in the catalogue: labelled on another text; export "
        return f"data.{DIALOGUE}", message + "the tasks again (evalkit labels export-labelstudio)"
    sources = data.get("sources")
    if sources is None and not case.has_sources:
        return None
    if type(sources) is not str or sources.split() != _sources_text(case).split():
        message = "not the case's sources in the catalogue: labelled on another text"
        return "data.sources", message
    return None


def _flag_problems(obj: dict[str, Any], file: str, where: str) -> list[Problem]:
    """A flag present but not a JSON boolean (``"true"``, ``1``, ``null``) is a problem."""
    return [
        Problem(file, where, flag, f"{obj[flag]!r} is not a JSON boolean (true or false)")
        for flag in ("was_cancelled", "ground_truth")
        if flag in obj and type(obj[flag]) is not bool
    ]


def _annotator(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("id")
    return value if type(value) is int and value >= 0 else None


def _result_rows(
    result: Any, where: str, file: str, case_id: str, who: str, labeler: str
) -> tuple[list[LabelRow], list[Problem]]:
    rows: list[LabelRow] = []
    problems: list[Problem] = []
    if not isinstance(result, list):
        return [], [Problem(file, where, "result", "is not a list")]
    for k, item in enumerate(result):
        at = f"result[{k}]"
        if not isinstance(item, dict):
            problems.append(Problem(file, where, at, "is not an object"))
            continue
        if item.get("type") != "choices":
            message = f"{item.get('type')!r}, not choices"
            problems.append(Problem(file, where, f"{at}.type", message))
            continue
        if item.get("to_name") != DIALOGUE:
            message = f"{item.get('to_name')!r}, not {DIALOGUE!r}"
            problems.append(Problem(file, where, f"{at}.to_name", message))
            continue
        dim = item.get("from_name")
        value = item.get("value")
        choices = value.get("choices") if isinstance(value, dict) else None
        if type(dim) is not str:
            problems.append(Problem(file, where, f"{at}.from_name", f"{dim!r} is not a name"))
            continue
        if not isinstance(choices, list) or len(choices) != 1 or type(choices[0]) is not str:
            message = f"{choices!r} is not a list of exactly one bin"
            problems.append(Problem(file, where, f"{at}.value.choices", message))
            continue
        rows.append(
            LabelRow(
                file,
                where,
                case_id,
                dim,
                choices[0],
                who,
                labeler,
                dimension_field=f"{at}.from_name",
                bin_field=f"{at}.value.choices",
            )
        )
    return rows, problems


def read_labelstudio_export(
    path: str | Path, catalogue: Catalogue, *, names: Mapping[int, str] | None = None
) -> LabelStudioImport:
    """The label sets of a Label Studio JSON export (see the module docstring).

    Raises :class:`ImportProblems` listing every problem (file, task, field); nothing is
    returned from a malformed export.
    """
    p = Path(path)
    file = str(p)
    names = dict(names or {})
    try:
        tasks = loads_strict(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, AnswerError) as exc:
        problem = Problem(file, None, None, f"not a JSON export ({exc})")
        raise ImportProblems(file, [problem]) from None
    except RecursionError:
        problem = Problem(file, None, None, "not a JSON export: nested too deeply to read")
        raise ImportProblems(file, [problem]) from None
    if not isinstance(tasks, list):
        problem = Problem(file, None, None, "the export is not a list of tasks")
        raise ImportProblems(file, [problem])
    rows: list[LabelRow] = []
    problems: list[Problem] = []
    cancelled = 0
    by_id = {c.id: c for c in catalogue.cases}
    for i, task in enumerate(tasks):
        tid = task.get("id") if isinstance(task, dict) else None
        where = f"task {tid}" if type(tid) is int else f"tasks[{i}]"
        if not isinstance(task, dict):
            problems.append(Problem(file, where, None, "is not an object"))
            continue
        if "id" in task and type(tid) is not int:
            problems.append(Problem(file, where, "id", f"{tid!r} is not a task id (an integer)"))
            continue
        data = task.get("data")
        case_id = data.get("case_id") if isinstance(data, dict) else None
        if not isinstance(data, dict) or type(case_id) is not str:
            problems.append(Problem(file, where, "data.case_id", f"{case_id!r} is not a case id"))
            continue
        case = by_id.get(case_id)
        if case is not None and (other := _other_text(data, case)) is not None:
            problems.append(Problem(file, where, *other))
            continue
        annotations = task.get("annotations")
        if not isinstance(annotations, list):
            problems.append(Problem(file, where, "annotations", "is missing or not a list"))
            continue
        for j, ann in enumerate(annotations):
            at = f"{where} annotations[{j}]"
            if not isinstance(ann, dict):
                problems.append(Problem(file, at, None, "is not an object"))
                continue
            if flags := _flag_problems(ann, file, at):
                problems += flags
                continue
            if ann.get("was_cancelled", False):
                cancelled += 1
                continue
            annotator = _annotator(ann.get("completed_by"))
            if annotator is None:
                message = f"{ann.get('completed_by')!r} is not an annotator id"
                problems.append(Problem(file, at, "completed_by", message))
                continue
            who = names.get(annotator, f"labelstudio-{annotator}")
            labeler = f"Label Studio annotator {annotator}"
            found, bad = _result_rows(ann.get("result"), at, file, case_id, who, labeler)
            rows += found
            problems += bad
    if problems:
        raise ImportProblems(file, problems)
    return LabelStudioImport(label_sets(rows, catalogue), cancelled)


def labelstudio_files(catalogue: Catalogue, out: Path) -> dict[Path, str]:
    """``out/labelstudio-tasks.json`` and ``out/labelstudio-config.xml``, with their texts."""
    tasks = json.dumps(labelstudio_tasks(catalogue), ensure_ascii=False, indent=1) + "\n"
    return {
        out / "labelstudio-tasks.json": tasks,
        out / "labelstudio-config.xml": labelstudio_config(catalogue),
    }


def write_labelstudio(catalogue: Catalogue, out: Path) -> tuple[Path, Path]:
    """Write ``labelstudio-tasks.json`` and ``labelstudio-config.xml`` into ``out``, both
    or neither (:func:`~evalkit._files.write_all`: a full disk is an
    :class:`EvalkitError` and leaves both as they were)."""
    files = labelstudio_files(catalogue, out)
    write_all(files, "Label Studio file")
    tasks, config = files
    return tasks, config
