"""Verifying seals: their place in the chain, their files, their git commit (ADR-0015).

A broken seal anywhere in the chain refuses held-out judging and agreement, whatever
later seals say: :func:`assert_chain` is called before every held-out judge run and
every held-out gate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evalkit._display import bullet_list, card, key_values
from evalkit.catalogue import Catalogue, Label, near_duplicates
from evalkit.errors import SealError
from evalkit.heldout._chain import NO_COMMIT, Seal, chain_breaks
from evalkit.heldout._git import GitAnchor, git_anchor
from evalkit.heldout._registry import (
    REGISTRY,
    case_file,
    heldout_case_files,
    read_registry,
    sha256_of,
)
from evalkit.heldout._template import read_filled

_STATUS_ORDER = ("BROKEN", "MISSING", "TAMPERED", "UNANCHORED")


@dataclass(frozen=True)
class SealStatus:
    """Result of checking one seal.

    ``status`` is ``OK``, or the worst of: ``BROKEN`` (its place in the chain), ``MISSING``
    (a sealed file is gone), ``TAMPERED`` (a sealed file changed), ``UNANCHORED`` (its git
    commit is gone, not an ancestor of HEAD, or does not hold the sealed bytes; or a
    committed version of the registry holds another entry at its place).
    ``problems`` says what broke, one line each, naming the file. ``path`` is the sheet.
    """

    seal: Seal
    status: str
    path: Path
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "OK"

    def describe(self) -> str:
        """``seal #i (id) of FILE, sealed AT: STATUS: problem; problem``."""
        head = f"seal {self.seal.name} of {self.seal.file}, sealed {self.seal.sealed_at}"
        return f"{head}: {self.status}: " + "; ".join(self.problems) if self.problems else head

    def __repr__(self) -> str:
        head = f"SealStatus {self.status}: seal {self.seal.name} of {self.seal.file}"
        return "\n".join([head, *(f"  {p}" for p in self.problems)])

    def _repr_html_(self) -> str:
        facts = key_values(
            [("Sealed file", self.seal.file), ("Sealed at", str(self.seal.sealed_at)),
             ("Sheet", str(self.path))]
        )  # fmt: skip
        problems = bullet_list(self.problems) if self.problems else None
        return card(
            f"Seal {self.seal.name}", facts, problems, verdict=self.status,
            kind="pass" if self.ok else "fail",
        )  # fmt: skip


def _file_problems(catalogue: Catalogue, seal: Seal) -> tuple[list[str], list[str]]:
    """(missing, changed): one line per sealed file that is gone or differs."""
    missing, changed = [], []
    for rel, sealed in sorted(seal.files.items()):
        path = catalogue.root / rel
        if not path.is_file():
            missing.append(f"{rel}: missing")
            continue
        now = sha256_of(path)
        if now != sealed:
            changed.append(
                f"{rel}: changed since sealing (sha256 now {now[:12]}…, sealed {sealed[:12]}…)"
            )
    return missing, changed


def _git_problems(catalogue: Catalogue, seal: Seal, anchor: GitAnchor | None) -> list[str]:
    """What the git checkout says against the seal's commit (nothing outside git)."""
    if anchor is None:
        return []
    commit = seal.git_commit
    if commit == NO_COMMIT:
        return [
            "it names no commit (sealed outside git), but the catalogue is in a git checkout: "
            "a seal made here must name the commit holding its files"
        ]
    if not anchor.has_commit(commit):
        return [
            f"its commit {commit[:12]} is not in this repository: history was rewritten, or "
            "the seal was made in another clone"
        ]
    problems = []
    if not anchor.is_ancestor(commit):
        head = (anchor.head or "none")[:12]
        problems.append(
            f"its commit {commit[:12]} is not an ancestor of HEAD {head}: history was "
            "rewritten, or HEAD is on another line of history"
        )
    for rel, sealed in sorted(seal.files.items()):
        got = anchor.blob_sha256(commit, catalogue.root / rel)
        if got is None:
            problems.append(f"{rel} is not in its commit {commit[:12]}")
        elif got != sealed:
            problems.append(
                f"{rel} in its commit {commit[:12]} has sha256 {got[:12]}…, not the sealed "
                f"{sealed[:12]}…: the seal was rewritten after that commit"
            )
    return problems


def _history_problems(
    catalogue: Catalogue, seals: list[Seal], anchor: GitAnchor | None
) -> dict[int, list[str]]:
    """Where a committed version of the registry is not a prefix of the chain now, by the
    index of the seal that differs (the last seal, when committed entries are gone)."""
    if anchor is None:
        return {}
    now = [s.hash for s in seals]
    out: dict[int, list[str]] = {}
    for commit, data in anchor.versions(catalogue.root / REGISTRY):
        try:
            committed = [str(entry["hash"]) for entry in json.loads(data)["seals"]]
        except (ValueError, KeyError, TypeError):
            continue  # a committed version that is not a registry: nothing to compare
        for i, entry in enumerate(committed):
            if i >= len(now):
                out.setdefault(len(now) - 1, []).append(
                    f"seal #{i} ({entry[:12]}), committed in {commit[:12]}, is gone from the "
                    "registry: entries were removed"
                )
                break
            if entry != now[i]:
                out.setdefault(i, []).append(
                    f"differs from seal #{i} committed in {commit[:12]} ({entry[:12]}): the "
                    "registry was rewritten, not appended to"
                )
                break
    return {i: problems[:1] for i, problems in out.items()}


def verify_seals(catalogue: Catalogue, *, now: datetime | None = None) -> list[SealStatus]:
    """Check every recorded seal: its place in the chain, its files and its git commit.

    Never raises for a broken seal (see :func:`assert_chain`); raises :class:`SealError`
    only for a registry that cannot be read. ``now`` (default: the clock) bounds
    ``sealed_at`` from above.
    """
    seals = read_registry(catalogue)
    if not seals:
        return []
    breaks = chain_breaks(seals, now or datetime.now(UTC))
    anchor = git_anchor(catalogue.root)
    history = _history_problems(catalogue, seals, anchor)
    out = []
    for position, seal in enumerate(seals):
        chain = breaks.get(position, [])
        missing, changed = _file_problems(catalogue, seal)
        git = _git_problems(catalogue, seal, anchor) + history.get(position, [])
        found = {"BROKEN": chain, "MISSING": missing, "TAMPERED": changed, "UNANCHORED": git}
        status = next((s for s in _STATUS_ORDER if found[s]), "OK")
        problems = tuple(p for s in _STATUS_ORDER for p in found[s])
        out.append(SealStatus(seal, status, catalogue.root / seal.file, problems))
    return out


def anchor_note(catalogue: Catalogue) -> str:
    """One line on what anchors the seals: the git checkout and HEAD, or none."""
    anchor = git_anchor(catalogue.root)
    if anchor is None:
        return (
            "note: not a git checkout: the seals' commits are not checked, only the chain "
            "and the files (ADR-0015)"
        )
    return f"git: commits checked against HEAD {(anchor.head or 'none')[:12]} of {anchor.top}"


def reseal_notes(statuses: list[SealStatus]) -> list[str]:
    """A note for each seal of a held-out set an earlier seal already covered.

    Sealing a set again is legitimate only before any judge run on it; the seal command
    refuses it when a ledger it reads holds answers on the set, but it cannot see every
    ledger. So the chain says so, for a reviewer (ADR-0015).
    """
    first: dict[str, Seal] = {}
    notes = []
    for st in statuses:
        earlier = first.setdefault(st.seal.sheet, st.seal)
        if earlier is not st.seal:
            notes.append(
                f"note: seal {st.seal.name} ({st.seal.file}) seals again the held-out set of "
                f"seal {earlier.name} ({earlier.file}): legitimate only if no judge ran on "
                "it in between"
            )
    return notes


def assert_chain(catalogue: Catalogue) -> list[SealStatus]:
    """Every seal's status; :class:`SealError` naming each broken seal if any is not OK."""
    statuses = verify_seals(catalogue)
    bad = [s for s in statuses if not s.ok]
    if bad:
        listing = "\n".join(f"  - {s.describe()}" for s in bad)
        raise SealError(
            f"{catalogue.root / REGISTRY}: {len(bad)} of {len(statuses)} seal(s) no longer "
            f"verify; held-out judging and agreement are refused whatever later seals say "
            f"(ADR-0015):\n{listing}"
        )
    return statuses


def current_seal(catalogue: Catalogue) -> SealStatus:
    """The latest seal, after verifying the whole chain; ``SealError`` if there is none or
    any seal fails."""
    statuses = assert_chain(catalogue)
    if not statuses:
        raise SealError(  # no "not sealed" prefix: the judge adds one of its own
            f"no held-out seal recorded in {catalogue.root / REGISTRY}: write the blind template "
            "(`evalkit heldout template`), fill it, commit it, then run "
            "`evalkit heldout seal LABELS` (ADR-0008)"
        )
    return statuses[-1]


def assert_sealed(catalogue: Catalogue) -> Seal:
    """The seal in force, or :class:`SealError`. Called before any held-out judge run.

    Refuses unless every seal of the chain verifies, the latest seal covers exactly the
    held-out case files there are now and every held-out case (every slot filled), and
    the held-out set is disjoint from calibration.
    """
    latest = current_seal(catalogue)
    seal = latest.seal
    now = {case_file(catalogue, p) for p in heldout_case_files(catalogue)}
    sealed = {rel for rel in seal.files if rel.startswith("cases/")}
    if now != sealed:
        raise SealError(
            f"seal {seal.name} does not cover the held-out case files there are now "
            f"(not sealed: {sorted(now - sealed)}, gone: {sorted(sealed - now)})"
        )
    _, problems = read_filled(latest.path, catalogue)
    if problems:
        raise SealError(
            f"sealed sheet {latest.path} (seal {seal.name}) no longer fits the held-out set: "
            f"{problems[0]}"
        )
    assert_disjoint(catalogue)
    return seal


def sealed_labels(catalogue: Catalogue, path: str | Path | None = None) -> list[Label]:
    """Held-out labels from the sealed sheet, after verifying the seal.

    With ``path``, the file must be the sealed one, byte for byte (else ``TAMPERED``).
    """
    seal = assert_sealed(catalogue)
    if path is not None and sha256_of(Path(path)) != seal.sha256:
        raise SealError(
            f"TAMPERED: {path} does not match the sheet of seal {seal.name} "
            f"({seal.file}, sealed {seal.sealed_at})"
        )
    labels, _ = read_filled(catalogue.root / seal.file, catalogue)
    return labels


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
