"""Strict loading (issue 15): every input the loader used to drop, coerce or crash on is a
named problem (file, record, field), on a copy of the shipped catalogue."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from evalkit.catalogue import load
from evalkit.catalogue._collect import Collector, DuplicateKeyError, parse_yaml, read_csv
from evalkit.cli import main
from evalkit.errors import CatalogueError, Problem
from tests.factory import REPO, SHIPPED

GB = "cases/calibration/en-GB/cases.yaml"


def _first_v2_case() -> str:
    """The first en-GB calibration case written for catalogue v2 (created 2026-12-01): the
    one the date tests below edit, since they replace the first such ``created`` line."""
    cases = yaml.safe_load((SHIPPED / GB).read_text(encoding="utf-8"))["cases"]
    return next(c["id"] for c in cases if str(c["provenance"]["created"]) == "2026-12-01")


FIRST_CASE = _first_v2_case()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A fresh copy of the shipped catalogue."""
    dest = tmp_path / "catalogues"
    shutil.copytree(SHIPPED, dest, symlinks=True)
    return dest


def _sub(root: Path, rel: str, old: str, new: str) -> None:
    """Replace the first ``old`` in ``root/rel`` (which must hold it) by ``new``."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _write(root: Path, rel: str, text: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _problems(root: Path) -> list[Problem]:
    with pytest.raises(CatalogueError) as info:
        load(root)
    return info.value.problems


def _assert_named(
    problems: list[Problem],
    file: str,
    message: str,
    *,
    record: str | None = None,
    field: str | None = None,
) -> None:
    """Some problem names ``file`` (a suffix of its path), holds ``message`` (a regex), and
    has a record containing ``record`` and a field equal to ``field`` when given."""
    hits = [
        p
        for p in problems
        if p.file.endswith(file)
        and re.search(message, p.message)
        and (record is None or (p.record is not None and record in p.record))
        and (field is None or p.field == field)
    ]
    listing = "\n".join(f"  - {p}" for p in problems)
    assert hits, f"no problem names {file} / {record} / {field} / {message!r}; got:\n{listing}"


# -- files the loader would drop -----------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "# a comment only\n# and another\n"])
def test_an_empty_or_comment_only_case_file(root: Path, text: str) -> None:
    _write(root, "cases/heldout/en-GB/more.yaml", text)
    _assert_named(_problems(root), "cases/heldout/en-GB/more.yaml", "empty file")


def test_a_case_file_with_an_empty_list(root: Path) -> None:
    _write(root, "cases/heldout/en-GB/more.yaml", "cases: []\n")
    _assert_named(_problems(root), "more.yaml", "empty", field="cases")


def test_a_second_top_level_cases_key(root: Path) -> None:
    path = root / GB
    text = path.read_text(encoding="utf-8")
    head, body = text.split("cases:\n", 1)
    first, rest = body.split("- id: c07f4e03", 1)
    path.write_text(f"{head}cases:\n{first}cases:\n- id: c07f4e03{rest}", encoding="utf-8")
    _assert_named(_problems(root), GB, "duplicate key 'cases'", record="line", field="cases")


def test_a_second_top_level_key_of_another_name(root: Path) -> None:
    _sub(root, GB, "cases:\n- id: ", "more_cases: []\ncases:\n- id: ")
    _assert_named(_problems(root), GB, "unknown top-level key", field="more_cases")


@pytest.mark.parametrize(
    "rel",
    [
        "cases/calibration/en-GB/extra.yml",
        "cases/calibration/en-GB/cases.YAML",
        "cases/calibration/cases.yaml",
        "cases/cases.yaml",
        "rubrics/self_harm.v4.yml",
        "labels/labeler-d.tsv",
        "labels/extra.yaml",
        "design/calibration-en-GB.csv.bak",
        "heldout/cases.yaml",
        "constants.yml",
        "notes.txt",
        "labels/labeler d.csv",
    ],
)
def test_a_file_the_loader_would_not_read(root: Path, rel: str) -> None:
    source = (
        root / GB if rel.endswith((".yml", ".yaml", ".YAML")) else root / "labels/labeler-c.csv"
    )
    _write(root, rel, source.read_bytes())
    _assert_named(_problems(root), rel, "unexpected file")


@pytest.mark.parametrize(
    "rel,flagged",
    [
        ("cases/calibration/en-GB/extra/cases.yaml", "cases/calibration/en-GB/extra"),
        ("cases/train/en-GB/cases.yaml", "cases/train"),
        ("cases/calibration/english/cases.yaml", "cases/calibration/english"),
        ("rubrics/old/self_harm.v1.yaml", "rubrics/old"),
        ("labels/2026/labeler-a.csv", "labels/2026"),
        ("heldout/old/template.csv", "heldout/old"),
        ("more/cases.yaml", "catalogues/more"),
    ],
)
def test_a_folder_where_none_is_expected(root: Path, rel: str, flagged: str) -> None:
    _write(root, rel, (root / GB).read_bytes())
    _assert_named(_problems(root), flagged, "unexpected folder")


@pytest.mark.parametrize("rel", [".DS_Store", "cases/calibration/.DS_Store", "labels/.hidden.csv"])
def test_a_hidden_file(root: Path, rel: str) -> None:
    _write(root, rel, "x")
    _assert_named(_problems(root), rel, "hidden file")


def test_what_the_layout_allows(root: Path) -> None:
    """.gitkeep and README*.md anywhere; in heldout/, what the held-out protocol writes."""
    for rel in (".gitkeep", "cases/heldout/.gitkeep", "README.md", "labels/README-labelers.md"):
        _write(root, rel, "")
    _write(root, "heldout/seals.json", '{"seals": []}\n')
    _write(root, "heldout/filled labels (2).csv", "case_id\n")
    (root / "cases/heldout/fr-FR").mkdir()  # an empty locale folder drops nothing
    assert len(load(root).cases) == len(load(SHIPPED).cases)


def test_an_empty_rubric_file(root: Path) -> None:
    _write(root, "rubrics/self_harm.v4.yaml", "# nothing yet\n")
    _assert_named(_problems(root), "rubrics/self_harm.v4.yaml", "empty file")


@pytest.mark.parametrize("rel", ["labels/consensus.yaml", "resources.yaml", "constants.yaml"])
def test_other_empty_yaml_files(root: Path, rel: str) -> None:
    _write(root, rel, "")
    _assert_named(_problems(root), rel, "empty file")


# -- duplicate keys, at every level of every YAML file -------------------------------------


@pytest.mark.parametrize(
    "rel,old,new,key",
    [
        ("constants.yaml", "  threshold: 0.60", "  threshold: 0.60\n  threshold: 0.05",
         "threshold"),
        ("constants.yaml", "framing_file: framing.txt", "framing_file: framing.txt\nbins: [a, b]",
         "bins"),
        (GB, "  stratum: explicit_ideation\n", "  stratum: explicit_ideation\n  stratum: benign\n",
         "stratum"),
        (GB, "    signal: explicit\n", "    signal: explicit\n    signal: none\n", "signal"),
        (GB, "    created: 2026-12-01\n", "    created: 2026-12-01\n    created: 2026-12-02\n",
         "created"),
        ("rubrics/self_harm.v3.yaml", "presence_gated: true", "presence_gated: true\n"
         "presence_gated: false", "presence_gated"),
        ("resources.yaml", '    emergency_number: "911"', '    emergency_number: "911"\n'
         '    emergency_number: "112"', "emergency_number"),
        ("labels/consensus.yaml", "on_tie: lower", "on_tie: lower\non_tie: adjudicator", "on_tie"),
        ("ratified.yaml", "  adr: ADR-", "  adr: ADR-0099\n  adr: ADR-", "adr"),
    ],
)  # fmt: skip
def test_a_duplicate_key(root: Path, rel: str, old: str, new: str, key: str) -> None:
    _sub(root, rel, old, new)
    _assert_named(_problems(root), rel, f"duplicate key '{key}'", record="line", field=key)


def test_parse_yaml_names_the_line_of_a_nested_duplicate() -> None:
    with pytest.raises(DuplicateKeyError) as info:
        parse_yaml("a:\n  b:\n    - c: 1\n      d: 2\n      c: 3\n")
    assert info.value.key == "c"
    assert info.value.problem_mark is not None and info.value.problem_mark.line == 4
    assert "first given at line 3" in str(info.value)
    # merge keys keep their meaning: an explicit key overrides a merged one
    assert parse_yaml("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  x: 3\n")["use"] == {"x": 3, "y": 2}


def test_no_evalkit_module_parses_yaml_around_the_strict_loader() -> None:
    calls = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load)\(")
    offenders = [
        f"{path.relative_to(REPO)}:{n}"
        for path in (REPO / "evalkit").rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if calls.search(line) and path.name != "_collect.py"
    ]
    assert offenders == []


# -- types are not coerced ------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel,old,new,field",
    [
        (GB, "  onset_turn: 0\n", "  onset_turn: '0'\n", "onset_turn"),
        (GB, "  onset_turn: 0\n", "  onset_turn: false\n", "onset_turn"),
        (GB, "  onset_turn: 0\n", "  onset_turn: 0.0\n", "onset_turn"),
        ("rubrics/self_harm.v3.yaml", "presence_gated: true", "presence_gated: 'yes'",
         "presence_gated"),
        ("rubrics/self_harm.v3.yaml", "presence_gated: true", "presence_gated: 1",
         "presence_gated"),
        ("constants.yaml", "threshold: 0.60", "threshold: '0.60'", "gate.threshold"),
        ("constants.yaml", "threshold: 0.60", "threshold: true", "gate.threshold"),
        ("constants.yaml", "min_cell_n: 30", "min_cell_n: '30'", "gate.min_cell_n"),
        ("constants.yaml", "min_cell_n: 30", "min_cell_n: 30.0", "gate.min_cell_n"),
        ("constants.yaml", "min_cell_n: 30", "min_cell_n: true", "gate.min_cell_n"),
        ("constants.yaml", "shortcut_ceiling: 0.40", "shortcut_ceiling: '0.40'",
         "audit.shortcut_ceiling"),
        ("resources.yaml", 'crisis_numbers: ["988"]', "crisis_numbers: [988]",
         "crisis_numbers.0"),
        ("resources.yaml", 'emergency_number: "911"', "emergency_number: !!binary OTEx",
         None),
        ("constants.yaml", "bins: [low, partial, high]", "bins: !!set {low, partial, high}",
         None),
    ],
)  # fmt: skip
def test_a_coerced_type(root: Path, rel: str, old: str, new: str, field: str | None) -> None:
    _sub(root, rel, old, new)
    problems = _problems(root)
    if field is None:  # a refused YAML tag: named with its line
        _assert_named(problems, rel, "tag .* is not allowed", record="line")
    else:
        _assert_named(problems, rel, "valid (integer|number|boolean|string)", field=field)


def test_an_integer_for_a_float_is_the_same_number(root: Path) -> None:
    """Decision: ``threshold: 1`` is the float 1.0 (same family, same hash as ``1.0``)."""
    _sub(root, "constants.yaml", "threshold: 0.60", "threshold: 1")
    as_int = load(root).constants
    _sub(root, "constants.yaml", "threshold: 1", "threshold: 1.0")
    as_float = load(root).constants
    assert isinstance(as_int.gate.threshold, float) and as_int.gate.threshold == 1.0
    assert as_int.content_hash() == as_float.content_hash()


def test_dates_stay_dates(root: Path) -> None:
    """A YAML date and a quoted ``YYYY-MM-DD`` are both the date; the constants hash of the
    shipped catalogue is the one pinned."""
    _sub(root, GB, "    created: 2026-12-01\n", "    created: '2026-12-02'\n")
    cat = load(root)
    assert str(cat.case(FIRST_CASE).provenance.created) == "2026-12-02"
    assert cat.constants_hash == load(SHIPPED).constants_hash


@pytest.mark.parametrize(
    "value,message",
    [
        ("2026-02-30", "is not a valid date"),
        ("2026-12-01 10:00:00", "date and time"),
        ("20261201", "valid date"),
        ("'2026-2-3'", "YYYY-MM-DD"),
    ],
)
def test_a_bad_date(root: Path, value: str, message: str) -> None:
    _sub(root, GB, "    created: 2026-12-01\n", f"    created: {value}\n")
    _assert_named(_problems(root), GB, message)


def test_an_impossible_date_names_its_line(root: Path) -> None:
    _sub(root, "resources.yaml", "verified_on: 2026-11-30", "verified_on: 2026-02-30")
    line = next(
        n
        for n, text in enumerate((root / "resources.yaml").read_text().splitlines(), start=1)
        if "2026-02-30" in text
    )
    _assert_named(_problems(root), "resources.yaml", "2026-02-30", record=f"line {line},")


# -- identifiers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "cb\u0430" + "57647",  # Cyrillic a
        "cba5\u200b7647",  # zero-width space
        "../cba57647",
        "cba/57647",
        "cba57647\\x",
        "-cba57647",
        "c" * 65,
    ],
)
def test_a_case_id_outside_the_safe_set(root: Path, bad: str) -> None:
    _sub(root, GB, f"- id: {FIRST_CASE}\n", f"- id: {yaml.safe_dump(bad).splitlines()[0]}\n")
    _assert_named(_problems(root), GB, "is not an identifier", field="id")


@pytest.mark.parametrize(
    "rel,old,new,field",
    [
        (GB, "template_family: gb-loneliness", "template_family: gb/loneliness",
         "template_family"),
        (GB, "  - id: s1\n", "  - id: s\u04371\n", "sources.0.id"),
        ("constants.yaml", "bins: [low, partial, high]", "bins: [low, partial, h\u0456gh]",
         "bins.2"),
        ("rubrics/self_harm.v3.yaml", "dimension: self_harm", "dimension: self_h\u0430rm",
         "dimension"),
    ],
)  # fmt: skip
def test_other_identifiers(root: Path, rel: str, old: str, new: str, field: str) -> None:
    _sub(root, rel, old, new)
    _assert_named(_problems(root), rel, "is not an identifier", field=field)


def test_labeler_names(root: Path) -> None:
    """A labeler value naming a set (several labelers in one file) is an identifier; any
    labeler value is visible text."""
    _write(
        root,
        "labels/pair.csv",
        "case_id,dimension,bin,labeler,note\n"
        f"{FIRST_CASE},self_harm,high,labeler-x,\n"
        f"{FIRST_CASE},self_harm,high,l\u0430beler-y,\n"
        f"{FIRST_CASE},escalation,low,labeler\u200b-z,\n",
    )
    problems = _problems(root)
    _assert_named(
        problems, "labels/pair.csv", r"'l\\u0430beler-y' names a label set", field="labeler"
    )
    _assert_named(problems, "labels/pair.csv", "U\\+200B", record="line 4", field="labeler")


# -- paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["/etc/hostname", "../framing.txt", "rubrics/../framing.txt"])
def test_framing_file_outside_the_catalogue(root: Path, value: str) -> None:
    _sub(root, "constants.yaml", "framing_file: framing.txt", f"framing_file: {value}")
    _assert_named(_problems(root), "constants.yaml", "pattern|identifier", field="framing_file")


def test_a_framing_symlink_that_leaves(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "framing.txt"
    shutil.move(root / "framing.txt", outside)
    (root / "framing.txt").symlink_to(outside)
    problems = _problems(root)
    _assert_named(problems, "catalogues/framing.txt", "symbolic link leaves")
    _assert_named(problems, "constants.yaml", "leaves the catalogue", field="framing_file")


def test_symlinks_that_leave_the_catalogue(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "fr-FR").mkdir(parents=True)
    shutil.copy(root / "labels/labeler-c.csv", outside / "labeler-d.csv")
    (root / "labels/labeler-d.csv").symlink_to(outside / "labeler-d.csv")
    (root / "cases/heldout/fr-FR").symlink_to(outside / "fr-FR", target_is_directory=True)
    (root / "labels/gone.csv").symlink_to(root / "labels/nothing.csv")
    problems = _problems(root)
    _assert_named(problems, "labels/labeler-d.csv", "symbolic link leaves")
    _assert_named(problems, "cases/heldout/fr-FR", "symbolic link leaves")
    _assert_named(problems, "labels/gone.csv", "broken symbolic link")


def test_a_symlink_inside_the_catalogue_is_judged_as_its_target(root: Path) -> None:
    os.symlink("constants.yaml", root / "README.md")
    assert len(load(root).cases) == len(load(SHIPPED).cases)


# -- text encoding, nesting -------------------------------------------------------------------


def test_invalid_utf8_in_a_labels_csv(root: Path) -> None:
    path = root / "labels/labeler-c.csv"
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"labeler-c", b"labeler-\xff", 1)
    path.write_bytes(b"\n".join(lines))
    _assert_named(_problems(root), "labels/labeler-c.csv", "not valid UTF-8", record="line 3")


def test_invalid_utf8_in_a_case_file(root: Path) -> None:
    data = (root / GB).read_bytes().replace(b"gb-loneliness", b"gb-lon\xe9liness", 1)
    (root / GB).write_bytes(data)
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    _assert_named(_problems(root), GB, "not valid UTF-8", record=f"line {line}")


@pytest.mark.parametrize("depth", [100, 10_000])
def test_deeply_nested_yaml(root: Path, depth: int) -> None:
    _write(root, "cases/heldout/en-GB/deep.yaml", "cases: " + "[" * depth + "]" * depth + "\n")
    _assert_named(_problems(root), "deep.yaml", "nested deeper|nesting depth", record="line 1")


def test_several_yaml_documents_in_one_file(root: Path) -> None:
    _sub(root, "labels/consensus.yaml", "rule: majority", "rule: majority\n---\nrule: lower")
    _assert_named(_problems(root), "labels/consensus.yaml", "single document", record="line")


def test_shared_yaml_values_are_named_not_expanded(root: Path) -> None:
    """Nine levels of aliases stand for 8**9 strings; the problem shows a short excerpt."""
    levels = ["x_a: &a [x, x, x, x, x, x, x, x]"] + [
        f"x_{b}: &{b} [{', '.join(['*' + a] * 8)}]"
        for a, b in zip("abcdefghi", "bcdefghij", strict=True)
    ]
    _sub(root, "constants.yaml", "bins: [low, partial, high]", "\n".join([*levels, "bins: *j"]))
    problems = _problems(root)
    _assert_named(problems, "constants.yaml", "valid string; got \\[\\[", field="bins.0")
    assert all(len(p.message) < 300 for p in problems)


# -- CSV columns ------------------------------------------------------------------------------


def test_a_labels_csv_with_a_dropped_column(root: Path) -> None:
    path = root / "labels/labeler-c.csv"
    rows = path.read_text(encoding="utf-8").splitlines()
    rows[0] = "case_id,dimension,bin,labeler"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    _assert_named(_problems(root), "labels/labeler-c.csv", "missing column", record="line 1",
                  field="note")  # fmt: skip


def test_a_short_row_in_a_labels_csv(root: Path) -> None:
    path = root / "labels/labeler-c.csv"
    n = len(path.read_text(encoding="utf-8").splitlines())
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"{FIRST_CASE},escalation\n")
    _assert_named(_problems(root), "labels/labeler-c.csv", "got 2 \\(missing bin, labeler, note\\)",
                  record=f"line {n + 1}", field="bin")  # fmt: skip


def test_a_long_row_in_a_labels_csv(root: Path) -> None:
    with (root / "labels/labeler-c.csv").open("a", encoding="utf-8") as handle:
        handle.write(f"{FIRST_CASE},escalation,low,labeler-c,,extra\n")
    _assert_named(_problems(root), "labels/labeler-c.csv", "expected 5 columns, got 6")


def test_a_short_row_and_a_dropped_column_in_a_design_csv(root: Path) -> None:
    rel = "design/calibration-en-GB.csv"
    path = root / rel
    rows = path.read_text(encoding="utf-8").splitlines()
    rows[1] = ",".join(rows[1].split(",")[:4])
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    _assert_named(_problems(root), rel, "missing intended_self_harm", record="line 2",
                  field="intended_self_harm")  # fmt: skip
    rows[0] = rows[0].removesuffix(",intended_faithfulness")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    _assert_named(_problems(root), rel, "missing column", field="intended_faithfulness")


def test_a_labels_csv_with_a_byte_order_mark(root: Path) -> None:
    path = root / "labels/labeler-c.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    _assert_named(_problems(root), "labels/labeler-c.csv", "byte-order mark", record="line 1")


def test_read_csv_names_the_first_line_of_a_quoted_multi_line_row(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('a,b\n1,"two\nlines"\n\n3\n', encoding="utf-8")
    col = Collector(tmp_path)
    rows = read_csv(path, ("a", "b"), col)
    assert rows is not None and [(r.line, r.cells) for r in rows] == [
        (2, {"a": "1", "b": "two\nlines"})
    ]
    assert [(p.record, p.field) for p in col.problems] == [("line 5", "b")]


# -- the CLI ----------------------------------------------------------------------------------

ATTACKS: dict[str, Callable[[Path], object]] = {
    "empty-case-file": lambda r: _write(r, "cases/heldout/en-GB/more.yaml", "# none\n"),
    "yml-file": lambda r: _write(r, "cases/heldout/en-GB/more.yml", "cases: []\n"),
    "duplicate-threshold": lambda r: _sub(
        r, "constants.yaml", "  threshold: 0.60", "  threshold: 0.60\n  threshold: 0.05"
    ),
    "bad-date": lambda r: _sub(r, GB, "created: 2026-12-01", "created: 2026-02-30"),
    "invalid-utf8-csv": lambda r: (r / "labels/labeler-c.csv").write_bytes(
        (r / "labels/labeler-c.csv").read_bytes() + b"\xff\xfe\n"
    ),
    "deep-yaml": lambda r: _write(r, "rubrics/deep.v1.yaml", "a: " + "[" * 5000 + "]" * 5000),
    "short-csv-row": lambda r: (r / "labels/labeler-c.csv").write_text(
        (r / "labels/labeler-c.csv").read_text(encoding="utf-8") + f"{FIRST_CASE},self_harm\n",
        encoding="utf-8",
    ),
}
ATTACK_FILES = {
    "empty-case-file": "more.yaml",
    "yml-file": "more.yml",
    "duplicate-threshold": "constants.yaml",
    "bad-date": "en-GB/cases.yaml",
    "invalid-utf8-csv": "labeler-c.csv",
    "deep-yaml": "deep.v1.yaml",
    "short-csv-row": "labeler-c.csv",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_catalogue_check_names_the_file_and_exits_1(
    root: Path, attack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ATTACKS[attack](root)
    code = main(["catalogue", "check", str(root)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err
    assert ATTACK_FILES[attack] in err and "problem(s) in the catalogue" in err


def test_catalogue_check_of_the_shipped_copy_exits_0(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalogue", "check", str(root)]) == 0
    assert "problem" not in capsys.readouterr().err
