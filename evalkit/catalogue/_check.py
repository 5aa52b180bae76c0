"""Balance tables and leak checks over a loaded catalogue (pure functions)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalkit.catalogue._catalogue import Catalogue
from evalkit.catalogue._models import Case


def summarize(catalogue: Catalogue) -> dict[str, pd.DataFrame]:
    """Balance tables of a catalogue.

    Returns ``cases`` (locale × stratum counts, one column per split, with totals) and
    ``labels`` (dimension × locale rows, one column per bin, consensus labels),
    ``coverage`` (:func:`labeler_coverage`) and ``labeler_agreement``
    (:func:`labeler_agreement`).
    """
    cases = catalogue.cases_frame()
    case_table = (
        cases.pivot_table(
            index=["locale", "stratum"],
            columns="split",
            values="case_id",
            aggfunc="count",
            fill_value=0,
            margins=True,
            margins_name="total",
        )
        if len(cases)
        else pd.DataFrame()
    )
    labels = catalogue.labels_frame().merge(cases[["case_id", "locale"]], on="case_id", how="left")
    bins = list(catalogue.constants.bins)
    label_table = (
        labels.pivot_table(
            index=["dimension", "locale"],
            columns="bin",
            values="case_id",
            aggfunc="count",
            fill_value=0,
        ).reindex(columns=bins, fill_value=0)
        if len(labels)
        else pd.DataFrame(columns=bins)
    )
    return {
        "cases": case_table,
        "labels": label_table,
        "coverage": labeler_coverage(catalogue),
        "labeler_agreement": labeler_agreement(catalogue),
    }


def labeler_coverage(catalogue: Catalogue) -> pd.DataFrame:
    """Labels given per label set (rows) and dimension (columns), calibration split."""
    long = catalogue.label_sets_frame()
    if long.empty:
        return pd.DataFrame()
    return long.pivot_table(
        index="label_set", columns="dimension", values="case_id", aggfunc="count", fill_value=0
    ).reindex(columns=list(catalogue.constants.gated_dimensions), fill_value=0)


def labeler_agreement(catalogue: Catalogue) -> pd.DataFrame:
    """Cohen's kappa of every pair of label sets, per dimension, on the cases both labelled
    (:func:`evalkit.agreement.pairwise_kappa`), with the raw agreement beside it.

    Columns: ``dimension``, ``set_a``, ``set_b``, ``n``, ``raw_agreement``, ``kappa``,
    ``ci_low``, ``ci_high`` (Wald, clipped to [-1, 1]), ``status``. Pairs of sets that
    share no case are left out.
    """
    from evalkit.agreement import pairwise_kappa

    long = catalogue.label_sets_frame()
    columns = ["dimension", "set_a", "set_b", "n", "raw_agreement", "kappa", "ci_low",
               "ci_high", "status"]  # fmt: skip
    frames = []
    for dim in catalogue.constants.gated_dimensions:
        sub = long[long["dimension"] == dim]
        if sub["label_set"].nunique() < 2:
            continue
        pairs = pairwise_kappa(
            sub.rename(columns={"case_id": "unit", "label_set": "rater", "bin": "label"})[
                ["unit", "rater", "label"]
            ],
            list(catalogue.constants.bins),
        )
        wide = sub.pivot_table(index="case_id", columns="label_set", values="bin", aggfunc="first")
        raw = [
            float((both[a] == both[b]).mean()) if len(both := wide[[a, b]].dropna()) else None
            for a, b in zip(pairs["rater_a"], pairs["rater_b"], strict=True)
        ]
        frames.append(
            pairs.rename(columns={"rater_a": "set_a", "rater_b": "set_b"}).assign(
                dimension=dim,
                raw_agreement=pd.Series(raw, index=pairs.index, dtype="Float64"),
            )
        )
    if not frames:
        return pd.DataFrame(columns=columns)
    table = pd.concat(frames, ignore_index=True)
    return table[table["n"] > 0][columns].reset_index(drop=True)


def _shingles(text: str, k: int = 5) -> frozenset[str]:
    norm = " ".join(text.lower().split())
    if len(norm) <= k:
        return frozenset({norm})
    return frozenset(norm[i : i + k] for i in range(len(norm) - k + 1))


@dataclass(frozen=True)
class NearDuplicate:
    """A held-out user turn that is a near copy of a calibration user turn."""

    heldout_case: str
    heldout_turn: int
    calibration_case: str
    calibration_turn: int
    similarity: float

    def __str__(self) -> str:
        return (
            f"held-out case {self.heldout_case} turns[{self.heldout_turn}] nearly copies "
            f"calibration case {self.calibration_case} turns[{self.calibration_turn}] "
            f"(similarity {self.similarity:.2f})"
        )


def near_duplicates(
    cases: tuple[Case, ...] | list[Case], threshold: float = 0.6, min_chars: int = 40
) -> list[NearDuplicate]:
    """Held-out user turns whose character 5-gram Jaccard similarity to any calibration
    user turn reaches ``threshold``.

    Turns shorter than ``min_chars`` are ignored: "thanks" may legitimately recur.
    """

    def turns(split: str) -> list[tuple[str, int, frozenset[str]]]:
        return [
            (c.id, i, _shingles(t.text))
            for c in cases
            if c.split == split
            for i, t in enumerate(c.turns)
            if t.role == "user" and len(t.text) >= min_chars
        ]

    calibration, heldout = turns("calibration"), turns("heldout")
    found: list[NearDuplicate] = []
    for hid, hi, hs in heldout:
        for cid, ci, cs in calibration:
            inter = len(hs & cs)
            if not inter:
                continue
            sim = inter / len(hs | cs)
            if sim >= threshold:
                found.append(NearDuplicate(hid, hi, cid, ci, round(sim, 3)))
    return found
