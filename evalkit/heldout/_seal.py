"""Sealing held-out labels before the judge runs (ADR-0008, ADR-0015).

:func:`seal_labels` appends one entry to the chain of :mod:`evalkit.heldout._chain`,
covering the filled sheet, the blind template and every held-out case file, and naming
the git commit that holds them. It refuses a sheet that is not complete, a set that
overlaps calibration, a stale template, a broken chain, a held-out set some known ledger
has already judged, and (in git) files not committed as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.errors import SealError
from evalkit.heldout._chain import NO_COMMIT, Seal, next_entry, parse_time
from evalkit.heldout._git import git_anchor
from evalkit.heldout._registry import (
    TEMPLATE,
    case_file,
    heldout_case_files,
    inside,
    read_registry,
    sha256_of,
    sheet_id,
    write_registry,
)
from evalkit.heldout._template import read_filled, template_csv
from evalkit.heldout._verify import assert_chain, assert_disjoint


def _describe_seal(seal_id: Any, by_id: Mapping[str, Seal]) -> str:
    if seal_id is None or (isinstance(seal_id, float) and pd.isna(seal_id)):
        return "no seal"
    seal = by_id.get(str(seal_id))
    return f"seal {seal.name}" if seal else f"seal {str(seal_id)[:12]}… (not in the registry)"


def _refuse_judged(
    catalogue: Catalogue, sheet: str, chain: list[Seal], ledgers: Mapping[str, pd.DataFrame]
) -> None:
    ids = {c.id for c in catalogue.split("heldout")}
    by_id = {s.id: s for s in chain}
    for name, frame in ledgers.items():
        if frame.empty or "case_id" not in frame.columns:
            continue
        rows = frame[frame["case_id"].isin(ids)]
        if rows.empty:
            continue
        named = rows["seal_id"] if "seal_id" in rows.columns else pd.Series([None] * len(rows))
        under = Counter(_describe_seal(s, by_id) for s in named)
        answers = rows["request_key"].nunique() if "request_key" in rows.columns else len(rows)
        raise SealError(
            f"refusing to seal {sheet}: the ledger {name} already holds {answers} judge "
            f"answer(s) on this held-out set (e.g. case {rows['case_id'].iloc[0]}) recorded "
            f"under {', '.join(sorted(under))}; labels sealed now could follow the judge's "
            "answers (ADR-0015). A held-out set is sealed before any judge run on it; "
            "re-validate on fresh held-out cases instead"
        )


def _check_template(catalogue: Catalogue) -> Path:
    path = catalogue.root / TEMPLATE
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SealError(
            f"refusing to seal: no readable blind template at {path} ({exc}); write it with "
            "`evalkit heldout template` and have the sheet filled from it"
        ) from None
    if text != template_csv(catalogue):
        raise SealError(
            f"refusing to seal: {path} is not the blind template of the held-out cases as "
            "they are now (a case changed, or was added, after it was written); write it "
            "again with `evalkit heldout template` and have the sheet labelled on it"
        )
    return path


def _commit_of(catalogue: Catalogue, files: Mapping[str, str]) -> str:
    """HEAD, after checking it holds every file as it is now; NO_COMMIT outside git."""
    anchor = git_anchor(catalogue.root)
    if anchor is None:
        return NO_COMMIT
    if anchor.head is None:
        raise SealError(
            f"refusing to seal: {anchor.top} is a git checkout without a commit yet; commit "
            "the filled sheet, the template and the held-out cases first (ADR-0015)"
        )
    stale = [
        rel
        for rel, sha in sorted(files.items())
        if anchor.blob_sha256(anchor.head, catalogue.root / rel) != sha
    ]
    if stale:
        raise SealError(
            f"refusing to seal: not committed as they are at HEAD {anchor.head[:12]}: "
            f"{', '.join(stale)}; commit them first, then seal (the seal names the commit "
            "that holds its files, ADR-0015)"
        )
    return anchor.head


def seal_labels(
    catalogue: Catalogue,
    labels_path: str | Path,
    *,
    ledgers: Mapping[str, pd.DataFrame] | None = None,
) -> Seal:
    """Seal a filled held-out sheet: append an entry to the chain and return it.

    Refuses (:class:`SealError`), writing nothing, when: the sheet has a blank or invalid
    slot, or was labelled on other conversations than the catalogue's; the held-out set
    is not disjoint from calibration; the sheet is not in ``<catalogue>/heldout/``; the blind
    template ``heldout/template.csv`` is missing or is not the template of the cases as
    they are; any existing seal fails to verify; any of ``ledgers`` (name -> frame of
    :func:`evalkit.judge.load_ledger`) already holds a judge answer on a held-out case
    (whatever seal it names: the set has been judged, so it cannot be sealed again); in a
    git checkout, the sealed files are not committed as they are at HEAD.
    """
    path = Path(labels_path)
    labels, problems = read_filled(path, catalogue)
    if problems:
        listing = "\n".join(f"  - {p}" for p in problems[:50])
        more = f"\n  … and {len(problems) - 50} more" if len(problems) > 50 else ""
        raise SealError(f"refusing to seal {path}: {len(problems)} problem(s)\n{listing}{more}")
    assert_disjoint(catalogue)
    sheet = inside(catalogue, path)
    if sheet is None or not sheet.startswith(f"{TEMPLATE.parent.as_posix()}/"):
        raise SealError(
            f"refusing to seal {path}: the sheet must lie in {catalogue.root / TEMPLATE.parent} "
            "(e.g. heldout/labels.csv), so that it is committed with the catalogue"
        )
    template = _check_template(catalogue)
    _refuse_judged(catalogue, sheet, read_registry(catalogue), ledgers or {})
    chain = [s.seal for s in assert_chain(catalogue)]
    files = {sheet: sha256_of(path), TEMPLATE.as_posix(): sha256_of(template)}
    files.update({case_file(catalogue, p): sha256_of(p) for p in heldout_case_files(catalogue)})
    commit = _commit_of(catalogue, files)
    now = datetime.now(UTC)
    last = parse_time(chain[-1].sealed_at) if chain else None
    if last is not None and now < last:
        raise SealError(
            f"refusing to seal: the clock reads {now.isoformat()}, before seal "
            f"{chain[-1].name} of {chain[-1].sealed_at}; fix the clock"
        )
    seal = next_entry(
        chain,
        sealed_at=now.isoformat(timespec="microseconds"),
        git_commit=commit,
        sheet=sheet_id(catalogue),
        file=sheet,
        files=files,
        n_labels=len(labels),
        n_cases=len({lab.case_id for lab in labels}),
    )
    write_registry(catalogue, [*chain, seal])
    return seal
