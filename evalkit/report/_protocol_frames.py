"""Frames the held-out and rubric-construct studies display.

Computed from :mod:`evalkit.heldout`, :mod:`evalkit.construct` and the catalogue; the
notebooks only display them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.errors import SealError


@dataclass(frozen=True)
class HeldoutStatus:
    """Whether held-out agreement may be computed, and why not when it may not."""

    sealed: bool
    message: str
    seals: pd.DataFrame


def heldout_status(catalogue: Catalogue) -> HeldoutStatus:
    """Check the held-out seal (ADR-0008) without raising: the protocol's status."""
    from evalkit.heldout import assert_sealed, verify_seals

    try:
        statuses = verify_seals(catalogue)
    except SealError as exc:
        return HeldoutStatus(False, str(exc), pd.DataFrame())
    seals = pd.DataFrame(
        [
            {
                "file": s.seal.file,
                "status": s.status,
                "sealed_at": s.seal.sealed_at,
                "sha256": s.seal.sha256[:16] + "…",
                "labels": s.seal.n_labels,
                "cases": s.seal.n_cases,
                "commit": s.seal.git_commit[:12],
            }
            for s in statuses
        ],
        columns=["file", "status", "sealed_at", "sha256", "labels", "cases", "commit"],
    )
    try:
        seal = assert_sealed(catalogue)
    except SealError as exc:
        said = str(exc) if statuses else f"held-out labels are not sealed: {exc}"
        return HeldoutStatus(False, said, seals)
    if not catalogue.split("heldout"):
        return HeldoutStatus(False, "the catalogue holds no held-out cases", seals)
    return HeldoutStatus(
        True, f"labels sealed at {seal.sealed_at} (sha256 {seal.sha256[:12]}…)", seals
    )


def split_composition(catalogue: Catalogue, split: str) -> pd.DataFrame:
    """Cases of one split per stratum (rows) and locale (columns), with totals."""
    cases = catalogue.cases_frame()
    cases = cases[cases["split"] == split]
    if cases.empty:
        return pd.DataFrame(columns=["Stratum", "Total"])
    table = pd.crosstab(cases["stratum"], cases["locale"])
    table["Total"] = table.sum(axis=1)
    table.loc["Total"] = table.sum(axis=0)
    table.columns.name = None
    return table.rename_axis("Stratum").reset_index()


def long_counts(frame: pd.DataFrame, keys: Sequence[str], value: str) -> pd.DataFrame:
    """Counts of ``value`` per ``keys`` as a long frame with a ``count`` column."""
    return frame.groupby([*keys, value], dropna=True).size().rename("count").reset_index()


def same_call_summary(
    view: pd.DataFrame, dimension: str, companion: str, bins: Sequence[str]
) -> pd.DataFrame:
    """Per stratum, how the two dimensions of one call scored the same turns.

    ``view`` is :func:`evalkit.construct.same_call_view`. The construct failure of
    ADR-0006 shows as benign turns that the companion dimension (escalation) scores
    low, agreeing with the humans, while ``dimension`` (self-harm v1) scores them high.
    """
    low, high = bins[0], bins[-1]
    rows = []
    for stratum, grp in view.groupby("stratum", sort=True):
        judged = grp[grp[f"{dimension}_judge"].notna()]
        n = len(judged)

        def share(col: str, value: str, frame: pd.DataFrame = judged) -> float | None:
            return float((frame[col] == value).mean()) if len(frame) else None

        rows.append(
            {
                "stratum": stratum,
                "n": n,
                "companion_low": share(f"{companion}_judge", low),
                "dimension_high": share(f"{dimension}_judge", high),
                "dimension_low": share(f"{dimension}_judge", low),
                "human_low": share(f"{dimension}_human", low),
                "same_call": float(judged["same_call"].mean()) if n else None,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "stratum",
            "n",
            "companion_low",
            "dimension_high",
            "dimension_low",
            "human_low",
            "same_call",
        ],
    )


def version_movement(cases: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Long counts of the judge's bins per stratum under each rubric version.

    ``cases`` is ``compare_versions(...)['cases']``; columns of the result: ``stratum``,
    ``version``, ``bin``, ``count``.
    """
    parts = [
        cases.groupby(["stratum", v])
        .size()
        .rename("count")
        .reset_index()
        .rename(columns={v: "bin"})
        .assign(version=v)
        for v in names
    ]
    if not parts:
        return pd.DataFrame(columns=["stratum", "version", "bin", "count"])
    return pd.concat(parts, ignore_index=True)[["stratum", "version", "bin", "count"]]


def construct_examples(
    cases: pd.DataFrame,
    catalogue: Catalogue,
    names: Sequence[str],
    *,
    strata: Sequence[str] = ("benign",),
    limit: int = 3,
) -> list[dict[str, Any]]:
    """Cases whose bin moved between two rubric versions, preferring ``strata``.

    ``cases`` is ``compare_versions(...)['cases']``. Items have the shape of
    :func:`disagreements` (``judge`` reads ``v1 high → v3 low``).
    """
    a, b = names
    moved = cases[cases[a] != cases[b]]
    if moved.empty or limit <= 0:
        return []
    preferred = moved["stratum"].isin(list(strata))
    moved = moved.assign(_p=~preferred).sort_values(["_p", "case_id"])
    out = []
    for rec in moved.head(limit).to_dict(orient="records"):
        case = catalogue.case(str(rec["case_id"]))
        out.append(
            {
                "case_id": case.id,
                "locale": case.locale,
                "stratum": case.stratum,
                "judge": f"{a} {rec[a]} → {b} {rec[b]}",
                "human": rec.get("human"),
                "turns": [(t.role, t.text) for t in case.turns],
            }
        )
    return out


def blind_preview(rows: Sequence[Mapping[str, str]], limit: int = 3) -> pd.DataFrame:
    """The first rows of the blind labeling template: what a held-out labeler sees."""
    return pd.DataFrame(
        [{"case_id": r["case_id"], "conversation": r["conversation"]} for r in rows[:limit]],
        columns=["case_id", "conversation"],
    )
