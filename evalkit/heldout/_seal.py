"""Sealing held-out labels before the judge runs, and refusing anything else (ADR-0008).

A seal records the sha256 of a filled label sheet, the UTC time and the git commit in
the registry ``<catalogue>/heldout/seals.json``. The judge refuses to score the held-out
split without a valid seal; held-out agreement refuses labels that no longer match
their seal (``TAMPERED``), a seal dated after the judge run, and a held-out set that
shares a case or template family with calibration.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from evalkit.catalogue import Catalogue, Label, near_duplicates
from evalkit.errors import SealError
from evalkit.heldout._template import read_filled

REGISTRY = Path("heldout") / "seals.json"


@dataclass(frozen=True)
class Seal:
    """One sealed label sheet. ``file`` is relative to the catalogue folder when inside it."""

    file: str
    sha256: str
    sealed_at: str
    git_commit: str
    n_labels: int
    n_cases: int


@dataclass(frozen=True)
class SealStatus:
    """Result of checking one seal: ``OK``, ``TAMPERED`` or ``MISSING``."""

    seal: Seal
    status: str
    path: Path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _git_commit(cwd: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def read_registry(catalogue: Catalogue) -> list[Seal]:
    """Seals recorded for a catalogue, oldest first (empty when none)."""
    path = catalogue.root / REGISTRY
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Seal(**row) for row in data["seals"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise SealError(f"{path}: the seals registry is corrupt: {exc}") from exc


def _resolve(catalogue: Catalogue, file: str) -> Path:
    path = Path(file)
    return path if path.is_absolute() else catalogue.root / path


def _relative(catalogue: Catalogue, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(catalogue.root.resolve()))
    except ValueError:
        return str(path.resolve())


def assert_disjoint(catalogue: Catalogue) -> None:
    """Raise :class:`SealError` if held-out and calibration share a case id, a template
    family, or a near-copied user turn."""
    cal = catalogue.split("calibration")
    ho = catalogue.split("heldout")
    families = {c.template_family for c in cal} & {c.template_family for c in ho}
    if families:
        raise SealError(
            f"held-out shares template family(ies) with calibration: {sorted(families)[:5]}"
        )
    leaks = near_duplicates(catalogue.cases)
    if leaks:
        raise SealError(
            f"{len(leaks)} held-out user turn(s) nearly copy calibration turns, e.g. {leaks[0]}"
        )


def seal_labels(catalogue: Catalogue, labels_path: str | Path) -> Seal:
    """Seal a filled held-out label sheet and record it in the registry.

    Refuses (``SealError``) a sheet with any blank or invalid slot, and a held-out set
    that is not disjoint from calibration. Returns the new seal.
    """
    path = Path(labels_path)
    labels, problems = read_filled(path, catalogue)
    if problems:
        listing = "\n".join(f"  - {p}" for p in problems[:50])
        more = f"\n  … and {len(problems) - 50} more" if len(problems) > 50 else ""
        raise SealError(f"refusing to seal {path}: {len(problems)} problem(s)\n{listing}{more}")
    assert_disjoint(catalogue)
    seal = Seal(
        file=_relative(catalogue, path),
        sha256=_sha256(path),
        sealed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        git_commit=_git_commit(catalogue.root),
        n_labels=len(labels),
        n_cases=len({lab.case_id for lab in labels}),
    )
    seals = [*read_registry(catalogue), seal]
    registry = catalogue.root / REGISTRY
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text(
        json.dumps({"seals": [asdict(s) for s in seals]}, indent=2) + "\n", encoding="utf-8"
    )
    return seal


def verify_seals(catalogue: Catalogue) -> list[SealStatus]:
    """Check every recorded seal against its file."""
    out = []
    for seal in read_registry(catalogue):
        path = _resolve(catalogue, seal.file)
        if not path.exists():
            status = "MISSING"
        elif _sha256(path) != seal.sha256:
            status = "TAMPERED"
        else:
            status = "OK"
        out.append(SealStatus(seal, status, path))
    return out


def current_seal(catalogue: Catalogue) -> SealStatus:
    """The latest seal, verified; ``SealError`` if there is none or it fails."""
    statuses = verify_seals(catalogue)
    if not statuses:
        raise SealError(
            "held-out labels are not sealed: fill the template, then run "
            "`evalkit heldout seal LABELS` (ADR-0008)"
        )
    latest = statuses[-1]
    if latest.status != "OK":
        raise SealError(
            f"{latest.status}: {latest.path} no longer matches its seal of "
            f"{latest.seal.sealed_at} (sha256 {latest.seal.sha256[:12]}…)"
        )
    return latest


def assert_sealed(catalogue: Catalogue) -> Seal:
    """Refuse unless the latest seal verifies, covers every held-out case, and the
    held-out set is disjoint from calibration. Called before any held-out judge run."""
    latest = current_seal(catalogue)
    _, problems = read_filled(latest.path, catalogue)
    if problems:
        raise SealError(
            f"sealed sheet {latest.path} no longer fits the held-out set: {problems[0]}"
        )
    assert_disjoint(catalogue)
    return latest.seal


def sealed_labels(catalogue: Catalogue, path: str | Path | None = None) -> list[Label]:
    """Held-out labels from the sealed sheet, after verifying the seal.

    With ``path``, the file must be the sealed one, byte for byte (else ``TAMPERED``).
    """
    seal = assert_sealed(catalogue)
    sealed_path = _resolve(catalogue, seal.file)
    if path is not None and _sha256(Path(path)) != seal.sha256:
        raise SealError(
            f"TAMPERED: {path} does not match the sealed labels "
            f"({seal.file}, sealed {seal.sealed_at})"
        )
    labels, _ = read_filled(sealed_path, catalogue)
    return labels


def assert_sealed_before(catalogue: Catalogue, ledger: pd.DataFrame) -> None:
    """Refuse held-out agreement when the seal is dated after the first held-out judge
    answer in ``ledger`` (its ``created_at`` column, ISO 8601 UTC)."""
    seal = assert_sealed(catalogue)
    ids = {c.id for c in catalogue.split("heldout")}
    rows = ledger[ledger["case_id"].isin(ids)]
    if rows.empty or "created_at" not in rows.columns:
        return
    first = pd.to_datetime(rows["created_at"], utc=True).min()
    sealed = pd.Timestamp(seal.sealed_at)
    if sealed.tzinfo is None:
        sealed = sealed.tz_localize("UTC")
    if sealed > first:
        raise SealError(
            f"the seal ({seal.sealed_at}) is dated after the held-out judge run "
            f"began ({first.isoformat()}): labels may have seen judge output"
        )
