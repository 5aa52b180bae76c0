"""Reading catalogue files strictly, collecting every problem with its file, record and field.

The readers here never raise on bad input and never stop at the first problem: they add
a :class:`~evalkit.errors.Problem` to a :class:`Collector` and return ``None`` (or skip
the row). What they refuse, so that nothing is read differently from what the file says:

- text that is not UTF-8 (the problem names the line of the first bad byte), and paths
  that are not regular files (a folder, a pipe);
- YAML with a duplicate key at any nesting level (``threshold: 0.60`` then
  ``threshold: 0.05`` is an error, not 0.05), an impossible date (``2026-02-30``),
  nesting deeper than :data:`MAX_YAML_DEPTH`, the ``!!binary``, ``!!set``, ``!!omap`` and
  ``!!pairs`` tags (bytes would pass for text, a set would shuffle an ordered list), and
  a file that is empty or holds only comments;
- CSV whose header is not exactly the expected columns, and rows with fewer or more
  fields than the header (the problem names the line and the first missing column).
"""

from __future__ import annotations

import csv
import io
import reprlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode

from evalkit.errors import Problem

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

M = TypeVar("M", bound=BaseModel)

#: Deepest nesting of lists and mappings a catalogue YAML file may hold (a case file
#: needs six levels); deeper is an error, named with its line, never a RecursionError.
MAX_YAML_DEPTH = 32


class Collector:
    """Problems found so far while reading the catalogue at ``root`` (paths relative to its
    parent, so a message reads ``catalogues/labels/x.csv``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []
        self._shown: dict[Path, str] = {}  # rel() of each path, asked once a row

    def rel(self, path: Path) -> str:
        """``path`` as a message names it: relative to the catalogue's parent when inside."""
        if path not in self._shown:
            try:
                self._shown[path] = str(path.relative_to(self.root.parent))
            except ValueError:
                self._shown[path] = str(path)
        return self._shown[path]

    def add(self, path: Path, record: str | None, field: str | None, message: str) -> None:
        self.problems.append(Problem(self.rel(path), record, field, message))

    def add_validation(self, path: Path, record: str | None, err: ValidationError) -> None:
        for e in err.errors():
            loc = ".".join(str(p) for p in e["loc"]) or None
            msg = e["msg"].removeprefix("Value error, ")
            for python, yaml_word in _YAML_WORDS:  # pydantic speaks Python; files are YAML
                msg = msg.replace(python, yaml_word)
            if e["type"] == "extra_forbidden":
                msg = "unknown field"
            elif e["type"] == "missing":
                msg = "missing field"
            elif e["type"] == "literal_error" or e["type"].endswith("_type"):
                msg = f"{msg}; got {_shown(e.get('input'))}"
            self.add(path, record, loc, msg)


#: pydantic's Python words in a message, and what a YAML file calls them.
_YAML_WORDS = (("a valid dictionary", "a mapping"), ("a valid tuple", "a list"),
               ("a valid list", "a list"))  # fmt: skip


class _YamlRepr(reprlib.Repr):
    """``reprlib.Repr`` that spells YAML's scalars as YAML does: ``null``, ``true``,
    ``false`` (Python's ``None`` and ``True`` are not what the user wrote)."""

    def repr_NoneType(self, value: None, level: int) -> str:
        return "null"

    def repr_bool(self, value: bool, level: int) -> str:
        return "true" if value else "false"


_SHOWN = _YamlRepr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring = 1, 4, 4, 60


def _shown(value: object, limit: int = 80) -> str:
    """``value`` for a message: short (nested or shared YAML values are cut, never expanded
    whole), in ASCII escapes, so a Cyrillic 'а' or a zero-width space shows, and with
    YAML's ``null``/``true``/``false`` for Python's ``None``/``True``/``False``."""
    text = _SHOWN.repr(value).encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def yaml_kind(value: object) -> str:
    """What a parsed YAML value is, in the user's words: ``null``, ``true``, ``a list``,
    ``a string``, ``a number``, ``a date``, ``a mapping`` (never a Python type name)."""
    if value is None or isinstance(value, bool):
        return _shown(value)
    kinds = ((dict, "a mapping"), (list, "a list"), (str, "a string"), ((int, float), "a number"))
    for types, name in kinds:
        if isinstance(value, types):
            return name
    return "a date" if hasattr(value, "isoformat") else f"a {type(value).__name__}"


class DuplicateKeyError(ConstructorError):
    """A YAML mapping gives the same key twice; ``key`` is the repeated key."""

    def __init__(self, key: object, first: yaml.Mark, again: yaml.Mark) -> None:
        super().__init__(
            None, None, f"duplicate key {key!r} (first given at line {first.line + 1})", again
        )
        self.key = key


class CatalogueYamlLoader(_SafeLoader):
    """``yaml.SafeLoader`` (libyaml's ``CSafeLoader`` where installed, the same parse ten
    times faster) that refuses what a catalogue file must not hold.

    Refused with a :class:`yaml.MarkedYAMLError` naming the line: a duplicate key in any
    mapping (:class:`DuplicateKeyError`), an impossible date, and the ``!!binary``,
    ``!!set``, ``!!omap`` and ``!!pairs`` tags. Merge keys (``<<``) keep their YAML
    meaning: keys given explicitly override merged ones, but an explicit key given twice
    is refused. Nesting is bounded by :func:`parse_yaml`, before the document is composed.
    """

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # unhashable key: SafeLoader names it below
                continue
            if first is not None:
                raise DuplicateKeyError(key, first, key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _timestamp(loader: CatalogueYamlLoader, node: ScalarNode) -> Any:
    try:
        return SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError as exc:  # 2026-02-30: the regex matches, the calendar does not
        raise ConstructorError(
            None, None, f"{node.value!r} is not a valid date: {exc}", node.start_mark
        ) from exc


def _refused(loader: CatalogueYamlLoader, node: Node) -> NoReturn:
    raise ConstructorError(
        None, None, f"the tag {node.tag} is not allowed in a catalogue file", node.start_mark
    )


CatalogueYamlLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
for _tag in ("binary", "set", "omap", "pairs"):
    CatalogueYamlLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


def parse_yaml(text: str) -> Any:
    """Parse one YAML document with :class:`CatalogueYamlLoader` (the loader every evalkit
    reader of catalogue YAML uses).

    Raises :class:`yaml.YAMLError` (with a line mark where YAML gives one) on malformed
    YAML and on everything the loader refuses. An empty document gives ``None``.
    """
    _check_depth(text)
    return yaml.load(text, Loader=CatalogueYamlLoader)


def _check_depth(text: str) -> None:
    """Raise ``ComposerError`` at the first list or mapping nested deeper than
    :data:`MAX_YAML_DEPTH`: composing a document recurses once per level, so ten thousand
    nested lists would end in a ``RecursionError`` (or, in libyaml, a crash). The event
    stream is flat, so counting it is safe at any depth; a syntax error is left for the
    parse proper to report."""
    events = _SafeLoader(text)
    depth = 0
    try:
        while events.check_event():
            event = events.get_event()
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise yaml.composer.ComposerError(
                        None,
                        None,
                        f"nested deeper than {MAX_YAML_DEPTH} levels",
                        event.start_mark,  # type: ignore[arg-type]
                    )
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.composer.ComposerError:
        raise
    except yaml.YAMLError:
        return
    finally:
        events.dispose()


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def read_text(path: Path, col: Collector, *, encoding: str = "utf-8") -> str | None:
    """The text of a regular file decoded strictly (``utf-8``, or ``utf-8-sig`` to drop a
    byte-order mark), or ``None`` after adding a problem: not a regular file, unreadable,
    or invalid UTF-8 (the problem names the line of the first bad byte)."""
    if not path.is_file():
        col.add(path, None, None, "not a regular file")
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        col.add(path, None, None, f"cannot read: {exc}")
        return None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        byte = data[exc.start : exc.start + 1].hex()
        col.add(path, f"line {_line_of(data, exc.start)}", None, f"not valid UTF-8 (byte 0x{byte})")
        return None


def read_yaml(path: Path, col: Collector) -> Any:
    """The parsed YAML document at ``path`` (:func:`parse_yaml`), or ``None`` after adding
    a problem. An empty or comment-only file is a problem: a file that says nothing is
    never read as "nothing to load"."""
    text = read_text(path, col)
    if text is None:
        return None
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        if context := getattr(exc, "context", None):
            problem = f"{context}: {problem}"
        field = str(exc.key) if isinstance(exc, DuplicateKeyError) else None
        col.add(path, where, field, f"malformed YAML: {problem}")
        return None
    except RecursionError:
        col.add(path, None, None, "malformed YAML: nested too deeply to read")
        return None
    if data is None:
        said = "holds only null" if _has_content(text) else "empty file (or only comments)"
        col.add(path, None, None, f"{said}: it must hold its records")
    return data


def _has_content(text: str) -> bool:
    """Whether a YAML text holds more than blank lines, comments and document markers."""
    lines = (line.strip() for line in text.splitlines())
    return any(line and not line.startswith("#") and line not in ("---", "...") for line in lines)


def list_under(data: Any, key: str, path: Path, col: Collector, *, allow_empty: bool) -> list[Any]:
    """The list a YAML file holds under its one top-level ``key``.

    Adds a problem (and returns ``[]``) unless ``data`` is a mapping whose only key is
    ``key`` and whose value is a list, non-empty unless ``allow_empty``; a second
    top-level key would otherwise be ignored. ``data is None`` (already reported by
    :func:`read_yaml`) gives ``[]`` silently.
    """
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        col.add(path, None, key, f"expected a mapping with a list under `{key}`")
        return []
    for other in data:
        if other != key:
            col.add(path, None, str(other), f"unknown top-level key (the file holds `{key}` only)")
    rows: list[Any] = data[key]
    if not rows and not allow_empty:
        col.add(path, None, key, f"the list under `{key}` is empty")
    return rows


@dataclass(frozen=True)
class CsvRow:
    """One data row of a CSV file: the line it starts on and its cells by column."""

    line: int
    cells: dict[str, str]


def read_csv(
    path: Path, columns: Sequence[str], col: Collector, *, encoding: str = "utf-8"
) -> list[CsvRow] | None:
    """The rows of a CSV file whose header must be exactly ``columns`` (cells stripped
    only in the header).

    Returns ``None`` after adding a problem when the file cannot be read as text
    (:func:`read_text`), is empty, or has another header (the problem names the first
    missing column as its field). Rows whose cells are all blank are skipped; a row with
    fewer fields than the header is a problem naming its line and first missing column,
    one with more fields a problem naming its line; both are left out of the result.
    A CSV syntax error stops the read with a problem naming its line. With the default
    ``utf-8`` a byte-order mark is a problem (it would hide in the first column's name);
    pass ``encoding="utf-8-sig"`` for sheets that spreadsheet programs save with one.
    """
    text = read_text(path, col, encoding=encoding)
    if text is None:
        return None
    expected = ",".join(columns)
    if text.startswith("\ufeff"):
        col.add(path, "line 1", None, "starts with a byte-order mark: save it as UTF-8 without BOM")
        return None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[CsvRow] = []
    start = 1
    try:
        header = next(reader, None)
        if header is None:
            col.add(path, "line 1", None, f"empty file: the header must be {expected}")
            return None
        got = [h.strip() for h in header]
        if got != list(columns):
            missing = [c for c in columns if c not in got]
            extra = [h for h in got if h not in columns]
            message = f"header must be {expected}; got {_shown(','.join(got))}"
            if missing:
                message += f"; missing column(s) {', '.join(missing)}"
            if extra:
                message += f"; unknown column(s) {_shown(', '.join(extra))}"
            col.add(path, "line 1", missing[0] if missing else None, message)
            return None
        start = reader.line_num + 1
        for row in reader:
            line, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) < len(columns):
                gone = columns[len(row) :]
                col.add(
                    path,
                    f"line {line}",
                    gone[0],
                    f"expected {len(columns)} columns, got {len(row)} (missing {', '.join(gone)})",
                )
                continue
            if len(row) > len(columns):
                message = f"expected {len(columns)} columns, got {len(row)}"
                col.add(path, f"line {line}", None, message)
                continue
            rows.append(CsvRow(line, dict(zip(columns, row, strict=True))))
    except csv.Error as exc:
        col.add(path, f"line {start}", None, f"malformed CSV: {exc}")
        return None
    return rows


def validate(model: type[M], data: Any, path: Path, record: str | None, col: Collector) -> M | None:
    """``model`` validated from the mapping ``data``, or ``None`` after adding one problem
    per validation error (record ``record``, field the error's location)."""
    if not isinstance(data, dict):
        col.add(path, record, None, f"expected a mapping, got {yaml_kind(data)}")
        return None
    try:
        return model.model_validate(data)
    except ValidationError as err:
        col.add_validation(path, record, err)
        return None
