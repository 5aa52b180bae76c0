"""Can this catalogue be passed without the construct? Shortcut baselines (ADR-0011).

The readers themselves live in :mod:`evalkit.catalogue._shortcuts` (fitted and fixed)
and :mod:`evalkit.catalogue._outside` (the outsider's lists); this module scores them.

A calibration set is a measuring instrument. If a rule that reads only the agent's
reply, only the user's side, or only surface features of the text reaches the gate's
kappa against the human labels, the instrument cannot tell a judge that measures the
construct from one that measures the writing. :func:`audit` fits such shortcuts and
reports, per gated dimension, the kappa each reaches against the catalogue's consensus
labels, on the gated calibration rows (the rows the gate reads).

Shortcuts (every fitted one is scored out of fold, with folds grouped by
``template_family`` so no family is in both the training and the test fold):

``reply_text``
    TF-IDF of the final reply (word 1–2-grams and character 3–5-grams) with
    multinomial logistic regression.
``user_text``
    the same model on the user's side only: every user turn, the agent's never.
``latest_user_text``
    the same model on the latest user turn only.
``surface``
    a depth-3 decision tree on surface features: reply length in words and characters,
    whether the reply gives the locale's crisis line, its emergency number, its
    urgent-care number or another locale's line, any digit group, counts of markdown
    markers, dashes, emoji, question and exclamation marks, number of turns, whether the
    case has sources, and the case file it came from.
``number_rule``
    a fixed rule, not fitted (self_harm and escalation only): the locale's own line for
    the dimension (crisis line; emergency number) -> the top bin, another locale's or
    another kind of line -> the middle bin, none -> the bottom bin.
``two_sided_fitted`` and ``two_sided_keywords`` (self_harm and escalation only)
    shallow readers of both sides that do not understand either: presence from the user's
    side, handling from the reply. The fitted one is a TF-IDF logistic regression on the
    user turns deciding "signal present" (trained on label != bottom bin) and another on
    the reply giving the bin where it says present; the fixed one is a keyword list on the
    user turns (:data:`PRESENCE_WORDS`) and the locale's line in the reply (top bin), a
    word of concern or another line (middle bin), nothing (bottom bin).
``two_sided_outside`` (self_harm and escalation only)
    the same kind of reader with word lists written from the guide alone by a reader
    outside the catalogue work, before it saw any case (:mod:`evalkit.catalogue._outside`).
``baseline_judge`` (reference)
    the offline baseline judge's bins, when given; shown for scale, never failing.

Pair consistency (catalogue v3, ADR-0028): for each shortcut, the share of the
dimension's minimal pairs (``design/pairs/``, halves labelled differently) whose two
halves it gets both right. A reply-only shortcut sees the same reply on both halves of a
pair that differs on the user's side, and a user-only shortcut the same user side on a
pair that differs in the reply, so each can get at most one half of such a pair right;
the audit fails when a reply-only or user-only shortcut gets more than
:data:`PAIR_CHANCE` of its pairs both right.

A shortcut fails the audit when its kappa point estimate reaches the frozen
``audit.shortcut_ceiling`` of the constants (0.40 against a gate of 0.60 in the shipped
catalogue); the two-sided readers when they reach ``audit.two_sided_ceiling`` (0.45,
ADR-0028), or the shortcut ceiling where none is declared. Intervals are the Wald
intervals of :func:`evalkit.agreement.cohens_kappa`,
clipped to [-1, 1].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalkit._display import bullet_list, card, frame_table
from evalkit.catalogue._catalogue import Catalogue
from evalkit.catalogue._models import GATED_STRATA, Case
from evalkit.catalogue._outside import CUES as OUTSIDE_CUES
from evalkit.catalogue._outside import outside_reader
from evalkit.catalogue._shortcuts import (
    PRESENCE_WORDS,
    fitted,
    number_rule,
    surface_features,
    two_sided_rule,
)

SHORTCUTS = (
    "reply_text",
    "user_text",
    "latest_user_text",
    "surface",
    "number_rule",
    "two_sided_fitted",
    "two_sided_keywords",
    "two_sided_outside",
)
#: Shortcuts that read one side only: their pair consistency must stay at chance or below.
ONE_SIDED = ("reply_text", "user_text", "latest_user_text")
#: Pair consistency a one-sided shortcut may reach (a coin would get half of a pair's
#: halves' bins ordered right).
PAIR_CHANCE = 0.5
REFERENCE = "baseline_judge"
AUDIT_COLUMNS = [
    "dimension",
    "shortcut",
    "kappa",
    "ci_low",
    "ci_high",
    "n",
    "passed",
    "reference",
    "status",
    "rows_right",
    "pairs",
    "pair_consistency",
]


@dataclass(frozen=True)
class AuditResult:
    """What each shortcut reaches, per gated dimension.

    ``table`` columns: ``dimension``, ``shortcut``, ``kappa``, ``ci_low``, ``ci_high``,
    ``n``, ``passed`` (the shortcut stayed below the ceiling; None for the reference
    row), ``reference``, ``status`` (the kappa status), ``rows_right`` (how many rows
    outside the dimension's most common bin the shortcut got right). ``predictions``
    holds every out-of-fold prediction (``dimension``, ``shortcut``, ``case_id``,
    ``human``, ``predicted``). ``passed`` is True when no shortcut reached the ceiling.
    """

    table: pd.DataFrame
    predictions: pd.DataFrame
    ceiling: float
    n_splits: int
    notes: tuple[str, ...] = field(default=())
    two_sided_ceiling: float | None = None

    def limit(self, shortcut: str) -> float:
        """The ceiling ``shortcut`` is held to (:func:`ceiling_for`)."""
        return ceiling_for(shortcut, self.ceiling, self.two_sided_ceiling)

    @property
    def passed(self) -> bool:
        scored = self.table[~self.table["reference"]]
        return bool(scored["passed"].fillna(True).astype(bool).all()) and self.pairs_passed

    @property
    def pairs_passed(self) -> bool:
        """No one-sided shortcut gets more than :data:`PAIR_CHANCE` of its pairs right."""
        one = self.table[self.table["shortcut"].isin(ONE_SIDED)]
        shares = pd.to_numeric(one["pair_consistency"], errors="coerce").dropna()
        return bool((shares <= PAIR_CHANCE).all())

    @property
    def failures(self) -> pd.DataFrame:
        """Rows of ``table`` whose shortcut reached the ceiling."""
        scored = self.table[~self.table["reference"]]
        return scored[scored["passed"].eq(False)]

    def rows_right(self, dimension: str, shortcut: str) -> list[str]:
        """Case ids outside the most common human bin that ``shortcut`` got right."""
        p = self.predictions
        mine = p[(p["dimension"] == dimension) & (p["shortcut"] == shortcut)]
        if mine.empty:
            return []
        modal = mine["human"].mode().iloc[0]
        hit = mine[(mine["human"] == mine["predicted"]) & (mine["human"] != modal)]
        return sorted(hit["case_id"])

    def __repr__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        worst = self.table[~self.table["reference"]].sort_values("kappa", ascending=False)
        top = worst.head(3)
        lines = [f"AuditResult({verdict}, ceiling {self.ceiling:.2f}; highest shortcuts:"]
        for rec in top.to_dict(orient="records"):
            if rec["kappa"] is not None and not pd.isna(rec["kappa"]):
                lines.append(
                    f"  {rec['dimension']!s:<13} {rec['shortcut']!s:<17} "
                    f"kappa {float(rec['kappa']):.3f} (n={rec['n']})"
                )
        return "\n".join(lines) + ")"

    def _repr_html_(self) -> str:
        notes = bullet_list(self.notes) if self.notes else None
        return card(
            "Catalogue audit",
            f"No shortcut may reach kappa {self.ceiling:.2f}, no two-sided reader "
            f"{self.limit('two_sided'):.2f} ({self.n_splits}-fold).",
            frame_table(self.table.drop(columns=["rows_right"], errors="ignore")),
            notes,
            verdict="PASS" if self.passed else "FAIL",
        )


def ceiling_for(shortcut: str, ceiling: float, two_sided_ceiling: float | None) -> float:
    """The ceiling ``shortcut`` is held to: ``two_sided_ceiling`` for a two-sided reader
    (``two_sided_*``) when one is declared, else ``ceiling``."""
    if shortcut.startswith("two_sided") and two_sided_ceiling is not None:
        return two_sided_ceiling
    return ceiling


def audit_rows(catalogue: Catalogue, dimension: str, split: str = "calibration") -> list[Case]:
    """The rows the gate reads for ``dimension``: gated strata with a consensus label."""
    labelled = {lab.case_id for lab in catalogue.labels if lab.dimension == dimension}
    return [c for c in catalogue.split(split) if c.stratum in GATED_STRATA and c.id in labelled]


def audit(
    catalogue: Catalogue,
    *,
    split: str = "calibration",
    n_splits: int = 5,
    baseline: Mapping[tuple[str, str], str] | None = None,
    case_files: Mapping[str, str] | None = None,
    ceiling: float | None = None,
) -> AuditResult:
    """Fit the shortcut baselines on ``split`` and score each against the consensus labels.

    ``baseline`` maps (case_id, dimension) to the baseline judge's bin (the reference
    row; omitted when None). ``case_files`` maps case id to the file it came from (the
    ``file`` surface feature; default the catalogue's own ``case_files``). ``ceiling``
    defaults to the frozen ``constants.audit.shortcut_ceiling``; a catalogue that declares
    none raises ``ValueError`` (there is no verdict without a declared ceiling).

    Folds: ``GroupKFold`` over ``template_family`` with ``min(n_splits, families)``
    folds; a dimension with fewer than 2 families or 2 bins is reported with status
    ``too_few_families`` and no kappa. Deterministic: the same catalogue gives the same
    table.
    """
    from evalkit.agreement import cohens_kappa  # heavy (scipy); only when auditing

    if ceiling is None:
        if catalogue.constants.audit is None:
            raise ValueError(
                "constants.yaml declares no audit.shortcut_ceiling: declare one (with an ADR) "
                "or pass ceiling="
            )
        ceiling = catalogue.constants.audit.shortcut_ceiling
    declared = catalogue.constants.audit
    two_sided = (declared.two_sided_ceiling if declared is not None else None) or ceiling
    bins = list(catalogue.constants.bins)
    files = dict(case_files if case_files is not None else catalogue.case_files)
    rows: list[dict[str, Any]] = []
    predictions: list[pd.DataFrame] = []
    notes: list[str] = []
    counted: dict[tuple[str, tuple[str, ...]], list[Any]] = {}
    used_splits = n_splits
    for dim in catalogue.constants.gated_dimensions:
        cases = audit_rows(catalogue, dim, split)
        human = {lab.case_id: lab.bin for lab in catalogue.labels if lab.dimension == dim}
        y = np.array([human[c.id] for c in cases], dtype=object)
        groups = np.array([c.template_family for c in cases], dtype=object)
        n_groups = len(set(groups))
        k = min(n_splits, n_groups)
        used_splits = min(used_splits, k) if k >= 2 else used_splits
        predicted: dict[str, np.ndarray | list[str | None]] = {}
        if k >= 2 and len(set(y)) >= 2:
            surface = pd.DataFrame([surface_features(c, catalogue, files) for c in cases])
            predicted.update(fitted(dim, cases, y, groups, k, surface, bins, counted))
        else:
            notes.append(
                f"{dim}: {n_groups} template families and {len(set(y))} bins on "
                f"{len(y)} rows: fitted shortcuts not scored"
            )
        if cases and dim in PRESENCE_WORDS:
            predicted["two_sided_keywords"] = [two_sided_rule(c, catalogue, dim) for c in cases]
        if cases and dim in OUTSIDE_CUES:
            predicted["two_sided_outside"] = [outside_reader(c, catalogue, dim) for c in cases]
        rule = [number_rule(c, catalogue, dim) for c in cases]
        if cases and all(r is not None for r in rule):
            predicted["number_rule"] = rule
        if baseline is not None:
            predicted[REFERENCE] = [baseline.get((c.id, dim)) for c in cases]
        for name in (*SHORTCUTS, REFERENCE):
            if name not in predicted:
                if name in SHORTCUTS[:4] or (name == "two_sided_fitted" and dim in PRESENCE_WORDS):
                    rows.append(_row(dim, name, None, len(y), ceiling, "too_few_families", 0))
                continue
            pred = list(predicted[name])
            frame = pd.DataFrame(
                {
                    "dimension": dim,
                    "shortcut": name,
                    "case_id": [c.id for c in cases],
                    "human": list(y),
                    "predicted": pred,
                }
            )
            predictions.append(frame)
            result = cohens_kappa(pred, list(y), bins)
            modal = pd.Series(list(y)).mode().iloc[0] if len(y) else None
            right = int(((frame["human"] == frame["predicted"]) & (frame["human"] != modal)).sum())
            limit = ceiling_for(name, ceiling, two_sided)
            row = _row(dim, name, result, len(y), limit, result.status, right)
            row["pairs"], row["pair_consistency"] = _pair_consistency(catalogue, dim, frame)
            rows.append(row)
    table = pd.DataFrame(rows, columns=AUDIT_COLUMNS)
    preds = (
        pd.concat(predictions, ignore_index=True)
        if predictions
        else pd.DataFrame(columns=["dimension", "shortcut", "case_id", "human", "predicted"])
    )
    return AuditResult(
        table=table,
        predictions=preds,
        ceiling=ceiling,
        n_splits=used_splits,
        notes=tuple(notes),
        two_sided_ceiling=two_sided,
    )


def _pair_consistency(
    catalogue: Catalogue, dimension: str, frame: pd.DataFrame
) -> tuple[int, float | None]:
    """(informative pairs, share got both right) of ``dimension``'s minimal pairs whose
    halves are both among the predicted rows and carry different human bins."""
    got = dict(zip(frame["case_id"], frame["predicted"] == frame["human"], strict=True))
    human = dict(zip(frame["case_id"], frame["human"], strict=True))
    mine = [
        p
        for p in catalogue.pairs
        if p.dimension == dimension
        and p.case_a in got
        and p.case_b in got
        and human[p.case_a] != human[p.case_b]
    ]
    if not mine:
        return 0, None
    both = sum(bool(got[p.case_a] and got[p.case_b]) for p in mine)
    return len(mine), both / len(mine)


def _row(
    dim: str, name: str, result: Any, n: int, ceiling: float, status: str, right: int
) -> dict[str, Any]:
    reference = name == REFERENCE
    kappa = None if result is None else result.value
    lo = None if result is None or result.ci_low is None else max(-1.0, result.ci_low)
    hi = None if result is None or result.ci_high is None else min(1.0, result.ci_high)
    # The reference row never passes or fails; a shortcut without a kappa reached nothing.
    passed = None if reference else (kappa is None or bool(kappa < ceiling))
    return {
        "dimension": dim,
        "shortcut": name,
        "kappa": kappa,
        "ci_low": lo,
        "ci_high": hi,
        "n": n,
        "passed": passed,
        "reference": reference,
        "status": status,
        "rows_right": right,
        "pairs": 0,
        "pair_consistency": None,
    }
