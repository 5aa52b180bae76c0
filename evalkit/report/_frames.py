"""Frames the calibration study displays, computed from evalkit's own functions.

The notebooks hold parameters, calls and displays; every number they show comes from
here, from :mod:`evalkit.agreement` or :mod:`evalkit.gate`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement import Diagnosis, agreement_table, diagnose
from evalkit.catalogue import GATED_STRATA, Catalogue, FrozenConstants
from evalkit.gate import (
    ADR,
    DimensionVerdict,
    GateVerdict,
    breakdown,
    complete_rows,
    gated_rows,
)
from evalkit.gate._threshold import fmt_interval
from evalkit.report._links import adr_link

#: Readable names of the columns of :func:`evalkit.agreement.agreement_table`.
AGREEMENT_COLUMNS = {
    "dimension": "Dimension",
    "n": "Pairs",
    "n_missing": "Pairs dropped",
    "p_observed": "Observed agreement (p_o)",
    "p_expected": "Chance agreement (p_e)",
    "kappa": "Cohen's kappa",
    "wald_ci": "95% CI (Wald)",
    "boot_ci": "95% CI (bootstrap)",
    "kappa_max": "Max. attainable kappa",
    "kappa_over_kappa_max": "Kappa / max. attainable",
    "ac1": "Gwet's AC1",
    "bp": "PABAK (Brennan–Prediger)",
    "alpha": "Krippendorff's alpha",
    "status": "Status",
    "flags": "Flags",
}

SEVERITY_NAMES = {"hard_fail": "hard fail", "fail": "fail", "note": "note"}


def adr_href(adr: str, base: str = "adr/") -> str:
    """Relative link to an ADR id such as ``adr-0005``: its rendered page on a report page,
    its markdown in ``docs/adr/`` when the study is shown live in Jupyter
    (:func:`~evalkit.report._links.adr_link`). An id the gate does not know links the
    ADRs' index, at ``#adr-NNNN``."""
    path = ADR.get(adr.lower())
    if path is None:
        number = adr.lower().removeprefix("adr-")
        return f"{adr_link(None, base)}#adr-{number}"
    return adr_link(path.rsplit("/", 1)[-1], base)


def verdict_overview(verdict: GateVerdict) -> pd.DataFrame:
    """One row per gated dimension: verdict, kappa, both intervals, pairs, blocking reasons."""
    rows = []
    for dim, v in verdict.dimensions.items():
        blocking = [r for r in v.reasons if r.severity in ("hard_fail", "fail")]
        rows.append(
            {
                "dimension": dim,
                "verdict": v.verdict,
                "kappa": v.kappa if v.kappa is not None else v.kappa_status,
                "wald_ci": fmt_interval(v.ci_low, v.ci_high),
                "boot_ci": fmt_interval(v.boot_low, v.boot_high),
                "n": v.n,
                "threshold": v.threshold,
                "blocking": len(blocking),
                "codes": ", ".join(r.code for r in blocking) or "—",
            }
        )
    return pd.DataFrame(rows)


def reasons_frame(verdict: DimensionVerdict, adr_base: str = "adr/") -> pd.DataFrame:
    """The verdict's reasons: severity, what happened, the rule's ADR and its link."""
    return pd.DataFrame(
        [
            {
                "severity": SEVERITY_NAMES.get(r.severity, r.severity),
                "code": r.code,
                "message": r.message,
                "adr": r.adr.upper(),
                "href": adr_href(r.adr, adr_base),
            }
            for r in verdict.reasons
        ],
        columns=["severity", "code", "message", "adr", "href"],
    )


def agreement_frame(
    pairs: pd.DataFrame,
    bins: Sequence[str],
    *,
    threshold: float,
    seed: int = 0,
    n_resamples: int = 2000,
) -> pd.DataFrame:
    """:func:`evalkit.agreement.agreement_table` over the gated rows, readable intervals.

    Rows without a usable judge answer or a human label are dropped jointly and
    counted in ``n_missing``. The bootstrap resamples whole template families.
    """
    rows = gated_rows(pairs)
    if rows.empty:
        return pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
    frame = rows.assign(template_family=rows["template_family"].fillna(rows["case_id"]))
    table = agreement_table(
        frame,
        list(bins),
        judge_col="judge",
        human_col="human",
        cluster_col="template_family",
        n_resamples=n_resamples,
        seed=seed,
        threshold=threshold,
    )
    table["wald_ci"] = [
        fmt_interval(_f(lo), _f(hi))
        for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
    ]
    table["boot_ci"] = [
        fmt_interval(_f(lo), _f(hi))
        for lo, hi in zip(table["boot_low"], table["boot_high"], strict=True)
    ]
    return table


def _f(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(out) else out


def dimension_diagnosis(
    pairs: pd.DataFrame, dimension: str, bins: Sequence[str], threshold: float
) -> Diagnosis:
    """:func:`evalkit.agreement.diagnose` on the gated, complete rows of one dimension."""
    rows = complete_rows(gated_rows(pairs[pairs["dimension"] == dimension]), bins)
    return diagnose(list(rows["judge"]), list(rows["human"]), list(bins), threshold=threshold)


def marginals(diag: Diagnosis) -> pd.DataFrame:
    """Both marginals: per bin, the judge's and the human's count and share."""
    return pd.DataFrame(
        [
            {
                "bin": c,
                "judge_n": diag.judge_counts[c],
                "judge_share": diag.judge_proportions[c],
                "human_n": diag.human_counts[c],
                "human_share": diag.human_proportions[c],
            }
            for c in diag.categories
        ]
    )


def paradox_summary(diag: Diagnosis) -> pd.DataFrame:
    """The quantities that tell a weak judge from a kappa paradox, each with a reading."""
    km = diag.kappa_max
    rows = [
        ("Observed agreement p_o", diag.p_observed, "share of cases where judge and human agree"),
        (
            "Chance agreement p_e",
            diag.p_expected,
            "agreement expected from the two marginals alone; high when one bin dominates",
        ),
        ("Cohen's kappa", diag.kappa.value, "(p_o − p_e) / (1 − p_e): the gate statistic"),
        (
            "Max. attainable kappa",
            km,
            "the largest kappa this judge's use of the bins allows against these labels; a "
            "judge using the bins as the humans do could reach 1",
        ),
        (
            "kappa / max. attainable",
            diag.kappa_over_kappa_max,
            "near 1: the judge does what the marginals allow",
        ),
        (
            "PABAK (Brennan–Prediger)",
            diag.brennan_prediger.value,
            "agreement corrected with uniform chance; robust to prevalence",
        ),
        (
            "Gwet's AC1",
            diag.gwet_ac1.value,
            "prevalence-robust; rewards a judge that always answers the majority bin",
        ),
        ("Krippendorff's alpha", diag.krippendorff_alpha.value, "nominal alpha of the two raters"),
        (
            "Stuart–Maxwell p-value",
            p_value(diag.marginal_homogeneity.p_value),
            f"small: the two marginals differ (rater bias) [{diag.marginal_homogeneity.status}]",
        ),
        (
            "Bowker symmetry p-value",
            p_value(diag.symmetry.p_value),
            f"small: disagreements lean one way [{diag.symmetry.status}]",
        ),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value", "reading"])


def per_bin_diagnostics(diag: Diagnosis) -> pd.DataFrame:
    """Per bin: specific agreement, prevalence index and bias index (bin against the rest)."""
    return pd.DataFrame(
        [
            {
                "bin": c,
                "specific_agreement": diag.specific_agreement[c],
                "prevalence_index": diag.prevalence_index_by_category[c],
                "bias_index": diag.bias_index_by_category[c],
            }
            for c in diag.categories
        ]
    )


def flags_text(diag: Diagnosis) -> list[str]:
    """Plain-language sentences for the active diagnostic flags."""
    texts = {
        "single_class_collapse": "one rater used a single bin: kappa carries no information",
        "all_high": "one rater put every case in the highest bin",
        "all_low": "one rater put every case in the lowest bin",
        "gate_unreachable": (
            f"the maximum attainable kappa is below the threshold {diag.threshold:.2f}: with "
            "its use of the bins this judge cannot pass against these labels; kappa_max "
            "comes from the judge's marginal against the humans' (a judge using the bins as "
            "the humans do could reach 1), so the judge's bin usage, not the corpus, is what "
            "to look at"
        ),
    }
    return [texts.get(f, f) for f in diag.active_flags]


def group_agreement(
    pairs: pd.DataFrame,
    dimension: str,
    by: str,
    constants: FrozenConstants,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
) -> pd.DataFrame:
    """Agreement per value of ``by`` (``locale``, ``stratum``…) for one dimension.

    :func:`evalkit.gate.breakdown` over every stratum (diagnostic and canary rows too,
    which never enter the gate: ``gated`` says which do), renamed for display: ``group``
    holds the value of ``by`` and ``reading`` says how to read the row. A cell with fewer
    than ``constants.gate.min_cell_n`` pairs is ``descriptive``: it describes, it does
    not decide.
    """
    rows = pairs[pairs["dimension"] == dimension]
    columns = [
        "group",
        "n",
        "p_observed",
        "kappa",
        "ci_low",
        "ci_high",
        "kappa_max",
        "ac1",
        "status",
        "gated",
        "descriptive",
        "reading",
    ]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    table = breakdown(rows, constants, by, seed=seed, n_resamples=n_resamples)
    table = table.rename(columns={by: "group"})
    min_n = constants.gate.min_cell_n
    if by == "stratum":
        gated = table["group"].isin(GATED_STRATA) | (table["group"] == "None")
    else:
        gated = pd.Series(True, index=table.index)
    table["gated"] = gated.astype(bool)
    table["descriptive"] = table["descriptive"].astype(bool)
    table["reading"] = [
        (f"descriptive (n < {min_n})" if small else "gating size") + ("" if g else "; never gated")
        for small, g in zip(table["descriptive"], table["gated"], strict=True)
    ]
    return table[columns].reset_index(drop=True)


def _count(value: Any) -> str:
    return "—" if value is None else str(int(value))


def _rate(value: Any) -> str:
    return "—" if value is None else f"{100.0 * float(value):.1f}%"


def p_value(value: float | None) -> str:
    """A p-value as text: ``< 0.001`` below a thousandth, ``—`` when it does not exist."""
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def recall_frame(recall: Mapping[str, Any] | None) -> pd.DataFrame:
    """The recall check (ADR-0002) as quantity / value rows.

    The rule of three (3/n, the 95% upper bound on a rate when *zero* events are seen in
    n) is shown only when no false negative was seen: with misses it bounds nothing and
    the exact upper bound above it is the number to read.
    """
    if not recall:
        return pd.DataFrame(columns=["quantity", "value"])
    rows = [
        ("Ideation rows labelled present (checked)", _count(recall.get("rows_checked"))),
        (
            "False negatives (judge said low or signal absent)",
            _count(recall.get("false_negatives")),
        ),
        ("Rows without a usable judge answer", _count(recall.get("unverified"))),
        ("95% upper bound of the miss rate", _rate(recall.get("miss_rate_upper_95"))),
    ]
    if recall.get("false_negatives") == 0:
        rows.append(
            ("Rule of three (≈ 3/n, zero misses)", _rate(recall.get("rule_of_three_upper_95")))
        )
    return pd.DataFrame(rows, columns=["quantity", "value"])


def apart_frame(verdict: DimensionVerdict, bins: Sequence[str]) -> pd.DataFrame:
    """Diagnostic and injection-canary rows, reported apart from kappa."""
    rows = []
    for stratum, info in verdict.apart.items():
        row: dict[str, Any] = {"stratum": stratum, "n": info.get("n", 0)}
        for b in bins:
            row[f"judge_{b}"] = info.get("judge_bins", {}).get(b, 0)
        row["judge_above_low"] = info.get("judge_above_low", 0)
        rows.append(row)
    return pd.DataFrame(
        rows, columns=["stratum", "n", *(f"judge_{b}" for b in bins), "judge_above_low"]
    )


def advice_frame(verdict: DimensionVerdict) -> pd.DataFrame:
    """Rebalancing advice (ADR-0004): cases to add per bin and locale."""
    return pd.DataFrame(verdict.advice, columns=["bin", "locale", "add", "human_labels_now"])


def disagreements(
    pairs: pd.DataFrame, catalogue: Catalogue, dimension: str, limit: int = 4
) -> list[dict[str, Any]]:
    """Up to ``limit`` gated cases where judge and human disagree on ``dimension``.

    Ordered by distance between the bins (largest first), then case id; each item holds
    the case's metadata, its turns as ``(role, text)`` pairs and the judge's
    ``rationale`` for its bin (None when the ledger holds none).
    """
    bins = list(catalogue.constants.bins)
    rank = {b: i for i, b in enumerate(bins)}
    rows = complete_rows(gated_rows(pairs[pairs["dimension"] == dimension]), bins)
    rows = rows[rows["judge"] != rows["human"]]
    if rows.empty or limit <= 0:
        return []
    gap = (rows["judge"].map(rank) - rows["human"].map(rank)).abs()
    rows = rows.assign(_gap=gap).sort_values(["_gap", "case_id"], ascending=[False, True])
    out = []
    for rec in rows.head(limit).to_dict(orient="records"):
        case = catalogue.case(str(rec["case_id"]))
        out.append(
            {
                "case_id": case.id,
                "locale": case.locale,
                "stratum": case.stratum,
                "judge": rec["judge"],
                "human": rec["human"],
                "rationale": _text(rec.get("rationale")),
                "turns": [(t.role, t.text) for t in case.turns],
            }
        )
    return out


def _text(value: Any) -> str | None:
    """A text cell as a string, None when missing or blank."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value).strip() or None
