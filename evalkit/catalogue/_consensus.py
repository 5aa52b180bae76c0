"""The consensus label set: one bin per case and dimension, built from several labelers.

A catalogue may hold any number of label sets (ADR-0012). The gate and the studies read
one set, the consensus, built by a rule declared in ``labels/consensus.yaml``:

``majority`` (default)
    the bin most labelers gave; a tie is broken by ``on_tie``.
``adjudicator``
    the named adjudicator's bin where it has one; elsewhere the majority.
``lower``
    the lowest bin any labeler gave (the most conservative reading for recall).

``on_tie`` is ``lower`` (the lower of the tied bins, in the frozen bin order: for
self-harm a tie between ``high`` and ``low`` reads as a missed signal, the error that
matters most) or ``adjudicator`` (the adjudicator's bin when it gave one, else lower).

Every consensus label carries a note saying which sets agreed, so disagreements stay
visible; :func:`disagreements` lists them.

One person, one vote (ADR-0031): a set is the person who labelled it
(:func:`labeler_identity`), and :func:`build_consensus` refuses two sets of one person.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from evalkit.catalogue._models import Label

CONSENSUS_LABELER = "consensus"


def labeler_identity(labeler: str) -> str:
    """Who a ``labeler`` value names: the part before the first ``": "`` (the whole value
    when there is none), Unicode-normalised (NFKC), with runs of whitespace made one space
    and case folded, so ``"Alice: first pass"`` and ``"alice"`` name one person.

    A label set is this person, not its file name (ADR-0031): ``labeler-a: model-assisted
    annotator ...`` is ``labeler-a``; a Label Studio import's ``Label Studio annotator 7``
    is annotator 7 whatever set name it was imported under.
    """
    who = labeler.split(": ", 1)[0]
    return " ".join(unicodedata.normalize("NFKC", who).split()).casefold()


class ConsensusRule(BaseModel):
    """How the consensus set is built (``labels/consensus.yaml``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: Literal["majority", "adjudicator", "lower"] = "majority"
    on_tie: Literal["lower", "adjudicator"] = "lower"
    adjudicator: str | None = None
    """Name of the label set that adjudicates (required by ``rule: adjudicator`` and
    ``on_tie: adjudicator``)."""

    @model_validator(mode="after")
    def _adjudicator_named(self) -> ConsensusRule:
        needs = self.rule == "adjudicator" or self.on_tie == "adjudicator"
        if needs and not self.adjudicator:
            raise ValueError("adjudicator: name the label set that adjudicates")
        return self

    def describe(self) -> str:
        """One line for reports: the rule in words."""
        if self.rule == "lower":
            return "lowest bin given by any labeler"
        if self.rule == "adjudicator":
            return f"{self.adjudicator}'s bin where given, else the majority (ties: lower bin)"
        tie = (
            f"{self.adjudicator}'s bin, else the lower bin"
            if self.on_tie == "adjudicator"
            else "the lower bin"
        )
        return f"majority of the label sets; ties: {tie}"


def build_consensus(
    label_sets: Mapping[str, Sequence[Label]],
    bins: Sequence[str],
    rule: ConsensusRule,
) -> list[Label]:
    """One consensus :class:`Label` per (case, dimension) labelled by any set.

    With a single set the consensus is that set (same bins; labeler ``consensus``).
    Order: by case id, then dimension, as first met in the sets. The note names the
    agreeing sets, e.g. ``"agree: labeler-a, labeler-b"`` or ``"tie low/high -> low"``.

    Raises ``ValueError`` when two sets hold labels of one person (the same
    :func:`labeler_identity`): a majority would count them twice. The catalogue loader
    reports that as a problem naming both files before it gets here.
    """
    owner: dict[str, str] = {}
    for name, labels in label_sets.items():
        for who in {labeler_identity(lab.labeler) for lab in labels}:
            if owner.setdefault(who, name) != name:
                raise ValueError(
                    f"label sets {owner[who]!r} and {name!r} are both labeler {who!r}: "
                    "one person, one vote (docs/adr/0031)"
                )
    rank = {b: i for i, b in enumerate(bins)}
    votes: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for name, labels in label_sets.items():
        for lab in labels:
            votes[(lab.case_id, lab.dimension)][name] = lab.bin
    out: list[Label] = []
    for (case_id, dimension), by_set in votes.items():
        bin_, note = _decide(by_set, rank, rule)
        out.append(
            Label(
                case_id=case_id,
                dimension=dimension,
                bin=bin_,
                labeler=CONSENSUS_LABELER,
                note=note,
            )
        )
    return out


def _decide(
    by_set: Mapping[str, str], rank: Mapping[str, int], rule: ConsensusRule
) -> tuple[str, str]:
    given = sorted(set(by_set.values()), key=rank.__getitem__)
    if len(given) == 1:
        return given[0], "agree: " + ", ".join(sorted(by_set))
    spread = ", ".join(f"{name}={b}" for name, b in sorted(by_set.items()))
    if rule.rule == "lower":
        return given[0], f"lowest of {spread}"
    adjudicated = by_set.get(rule.adjudicator) if rule.adjudicator else None
    if rule.rule == "adjudicator" and adjudicated is not None:
        return adjudicated, f"adjudicated by {rule.adjudicator} ({spread})"
    counts: dict[str, int] = defaultdict(int)
    for b in by_set.values():
        counts[b] += 1
    top = max(counts.values())
    leaders = [b for b in given if counts[b] == top]
    if len(leaders) == 1:
        return leaders[0], f"majority {top}/{len(by_set)} ({spread})"
    if rule.on_tie == "adjudicator" and adjudicated is not None:
        return adjudicated, f"tie broken by {rule.adjudicator} ({spread})"
    return leaders[0], f"tie {'/'.join(leaders)} -> {leaders[0]} (lower bin; {spread})"


def label_sets_frame(label_sets: Mapping[str, Sequence[Label]]) -> pd.DataFrame:
    """Long frame of every set's labels: ``label_set``, ``case_id``, ``dimension``, ``bin``,
    ``labeler``, ``note``."""
    rows = [
        {"label_set": name, **lab.model_dump()}
        for name, labels in label_sets.items()
        for lab in labels
    ]
    return pd.DataFrame(
        rows, columns=["label_set", "case_id", "dimension", "bin", "labeler", "note"]
    )


def disagreements(label_sets: Mapping[str, Sequence[Label]]) -> pd.DataFrame:
    """Every (case, dimension) on which the sets that labelled it gave more than one bin.

    Columns: ``case_id``, ``dimension``, then one column per set (bin or empty).
    """
    long = label_sets_frame(label_sets)
    if long.empty:
        return pd.DataFrame(columns=["case_id", "dimension"])
    wide = long.pivot_table(
        index=["case_id", "dimension"], columns="label_set", values="bin", aggfunc="first"
    )
    spread = wide.nunique(axis=1)
    return wide[spread > 1].reset_index().rename_axis(columns=None)
