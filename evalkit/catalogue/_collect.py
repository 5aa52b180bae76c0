"""The problem collector shared by the catalogue readers: every problem is kept, with its
file, record and field, and nothing stops at the first one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalkit.errors import Problem

M = TypeVar("M", bound=BaseModel)


class Collector:
    """Problems found so far while reading the catalogue at ``root`` (paths relative to its
    parent, so a message reads ``catalogues/labels/x.csv``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root.parent))
        except ValueError:
            return str(path)

    def add(self, path: Path, record: str | None, field: str | None, message: str) -> None:
        self.problems.append(Problem(self.rel(path), record, field, message))

    def add_validation(self, path: Path, record: str | None, err: ValidationError) -> None:
        for e in err.errors():
            loc = ".".join(str(p) for p in e["loc"]) or None
            msg = e["msg"].removeprefix("Value error, ")
            if e["type"] == "extra_forbidden":
                msg = "unknown field"
            elif e["type"] == "missing":
                msg = "missing field"
            elif e["type"] == "literal_error":
                msg = f"{msg}; got {e.get('input')!r}"
            self.add(path, record, loc, msg)


def read_yaml(path: Path, col: Collector) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        col.add(path, None, None, f"cannot read: {exc}")
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        col.add(path, where, None, f"malformed YAML: {problem}")
        return None


def validate(model: type[M], data: Any, path: Path, record: str | None, col: Collector) -> M | None:
    if not isinstance(data, dict):
        col.add(path, record, None, f"expected a mapping, got {type(data).__name__}")
        return None
    try:
        return model.model_validate(data)
    except ValidationError as err:
        col.add_validation(path, record, err)
        return None
