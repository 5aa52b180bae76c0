"""The seal registry on disk and what a seal covers (ADR-0015).

``<catalogue>/heldout/seals.json`` holds ``{"schema": ..., "seals": [...]}``, the entries
of :mod:`evalkit.heldout._chain`, oldest first. A seal covers the filled sheet, the blind
template :data:`TEMPLATE` and every held-out case file; paths are relative to the
catalogue folder, ``/`` separated.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from evalkit._files import write_whole
from evalkit.catalogue import Catalogue
from evalkit.errors import SealError
from evalkit.heldout._chain import Seal

REGISTRY = Path("heldout") / "seals.json"
TEMPLATE = Path("heldout") / "template.csv"
REGISTRY_SCHEMA = "evalkit-heldout-seals/2"


def sha256_of(path: Path) -> str:
    """sha256 of the file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def inside(catalogue: Catalogue, path: Path) -> str | None:
    """``path`` relative to the catalogue folder, ``/`` separated; None if outside it."""
    try:
        return path.resolve().relative_to(catalogue.root.resolve()).as_posix()
    except ValueError:
        return None


def sheet_id(catalogue: Catalogue) -> str:
    """Identity of the held-out set: sha256 of its case ids, sorted, one per line."""
    ids = sorted(c.id for c in catalogue.split("heldout"))
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def heldout_case_files(catalogue: Catalogue) -> list[Path]:
    """Every file of held-out cases (``cases/heldout/<locale>/*.yaml``), sorted."""
    return sorted((catalogue.root / "cases" / "heldout").glob("*/*.yaml"))


def case_file(catalogue: Catalogue, path: Path) -> str:
    """A path under the catalogue folder as the registry records it."""
    return path.relative_to(catalogue.root).as_posix()


def read_registry(catalogue: Catalogue) -> list[Seal]:
    """Seals recorded for a catalogue, oldest first (empty when there is no registry).

    A registry that is not JSON, of another schema, or with an entry missing a field or
    holding a malformed one is a :class:`SealError` naming the entry and the field.
    Whether the entries form an intact chain is for :mod:`evalkit.heldout._verify`.
    """
    path = catalogue.root / REGISTRY
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SealError(f"{path}: the seals registry cannot be read: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("seals"), list):
        raise SealError(f"{path}: expected an object with a list under `seals`")
    if data.get("schema") != REGISTRY_SCHEMA:
        raise SealError(
            f"{path}: registry schema {json.dumps(data.get('schema'))}, this evalkit reads "
            f"{REGISTRY_SCHEMA!r} (a registry from before ADR-0015 is not a hash chain)"
        )
    seals = []
    for i, row in enumerate(data["seals"]):
        if not isinstance(row, dict):
            raise SealError(f"{path}: seal #{i}: expected an object, got {json.dumps(row)[:60]}")
        try:
            seals.append(Seal.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "entry"
            what = "missing field" if err["type"] == "missing" else err["msg"]
            raise SealError(f"{path}: seal #{i}: {where}: {what}") from None
    return seals


def write_registry(catalogue: Catalogue, seals: list[Seal]) -> None:
    """Replace the registry with ``seals`` in one rename (never a half-written file)."""
    doc = {"schema": REGISTRY_SCHEMA, "seals": [s.model_dump() for s in seals]}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    write_whole(catalogue.root / REGISTRY, text.encode("utf-8"), "seals registry")
