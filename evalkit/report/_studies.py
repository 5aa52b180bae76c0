"""Frames the study notebooks display, computed from evalkit's own functions.

The notebooks hold parameters, calls and displays; every number they show comes from
here, from :mod:`evalkit.agreement`, :mod:`evalkit.gate`, :mod:`evalkit.heldout` or
:mod:`evalkit.construct`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement import Diagnosis, agreement_table, diagnose, gate_power, sample_size
from evalkit.catalogue import GATED_STRATA, Catalogue, FrozenConstants
from evalkit.errors import SealError
from evalkit.gate import ADR, DimensionVerdict, GateVerdict, breakdown

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
    "kappa_over_kappa_max": "kappa / max",
    "ac1": "Gwet's AC1",
    "bp": "PABAK (Brennan–Prediger)",
    "alpha": "Krippendorff's alpha",
    "status": "Status",
    "flags": "Flags",
}

SEVERITY_NAMES = {"hard_fail": "hard fail", "fail": "fail", "note": "note"}


def adr_href(adr: str, base: str = "adr/") -> str:
    """Relative link to the rendered page of an ADR id such as ``adr-0005``."""
    path = ADR.get(adr.lower())
    if path is None:
        number = adr.lower().removeprefix("adr-")
        return f"{base}index.html#adr-{number}"
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return f"{base}{stem}.html"


def study_pairs(pairs: pd.DataFrame, split: str | None = "calibration") -> pd.DataFrame:
    """Pairs of one split (all when ``split`` is None)."""
    if split is None:
        return pairs.reset_index(drop=True)
    return pairs[pairs["split"] == split].reset_index(drop=True)


def gated_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """Rows of the strata that enter kappa (diagnostic and canary cases are apart)."""
    if pairs["stratum"].notna().any():
        return pairs[pairs["stratum"].isin(GATED_STRATA)]
    return pairs


def complete_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """Rows with both a usable judge answer and a human label."""
    return pairs[pairs["judge_bin"].notna() & pairs["human_bin"].notna()]


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
                "wald_ci": _ci(v.ci_low, v.ci_high),
                "boot_ci": _ci(v.boot_low, v.boot_high),
                "n": v.n,
                "threshold": v.threshold,
                "blocking": len(blocking),
                "codes": ", ".join(r.code for r in blocking) or "—",
            }
        )
    return pd.DataFrame(rows)


def _ci(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "—"
    return f"[{low:.3f}, {high:.3f}]"


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
        judge_col="judge_bin",
        human_col="human_bin",
        cluster_col="template_family",
        n_resamples=n_resamples,
        seed=seed,
        threshold=threshold,
    )
    table["wald_ci"] = [
        _ci(_f(lo), _f(hi)) for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
    ]
    table["boot_ci"] = [
        _ci(_f(lo), _f(hi)) for lo, hi in zip(table["boot_low"], table["boot_high"], strict=True)
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
    rows = complete_rows(gated_rows(pairs[pairs["dimension"] == dimension]))
    return diagnose(
        list(rows["judge_bin"]), list(rows["human_bin"]), list(bins), threshold=threshold
    )


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
            "the largest kappa these marginals allow; below the threshold, no judge could pass",
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
            f"the maximum attainable kappa is below the threshold {diag.threshold:.2f}: "
            "no judge could pass on these marginals (ADR-0004: rebalance the corpus)"
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
    """The recall check (ADR-0002) as quantity / value rows."""
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
        ("Rule of three (≈ 3/n)", _rate(recall.get("rule_of_three_upper_95"))),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value"])


@dataclass(frozen=True)
class PowerPanel:
    """Sample size and power of the gate for one dimension (:func:`power_panel`)."""

    n: int
    threshold: float
    marginals: tuple[float, ...]
    curve: pd.DataFrame
    sizes: pd.DataFrame
    note: str


def power_panel(
    diag: Diagnosis,
    *,
    threshold: float,
    seed: int = 0,
    n_sim: int = 1000,
    kappas: Iterable[float] = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9),
    half_widths: Iterable[float] = (0.05, 0.10, 0.15),
    level: float = 0.95,
) -> PowerPanel:
    """How many pairs the gate needs, and how likely it is to pass at the current n.

    Uses the human marginals for both raters (a judge calibrated to the humans).
    ``curve``: for each true kappa, the simulated probability of passing with the
    current number of pairs, by the point rule and by the lower-bound rule
    (:func:`evalkit.agreement.gate_power`). ``sizes``: pairs needed for a 95% interval
    of ± each half width around the threshold (:func:`evalkit.agreement.sample_size`).
    Values these marginals cannot reach are left out and said so in ``note``.
    """
    n = diag.n
    props = [diag.human_proportions[c] or 0.0 for c in diag.categories]
    total = sum(props)
    marg = tuple(p / total for p in props) if total > 0 else tuple(1.0 / len(props) for _ in props)
    notes = []
    curve_rows = []
    if n >= 2 and sum(p > 0 for p in marg) >= 2:
        for k in kappas:
            try:
                res = gate_power(k, n, threshold, list(marg), n_sim=n_sim, seed=seed)
            except ValueError as exc:
                notes.append(f"true kappa {k:.2f}: {exc}")
                continue
            curve_rows.append(
                {
                    "true_kappa": k,
                    "p_pass_point": res.p_pass_point,
                    "p_pass_lower_bound": res.p_pass_lower_bound,
                }
            )
    else:
        notes.append("the human labels use fewer than two bins: power cannot be simulated")
    size_rows = []
    for hw in half_widths:
        try:
            needed: int | None = sample_size(
                threshold, hw, prevalence=list(marg), categories=len(marg), level=level
            )
        except ValueError as exc:
            needed = None
            notes.append(f"half width {hw:.2f}: {exc}")
        size_rows.append(
            {"kappa": threshold, "half_width": hw, "pairs_needed": needed, "pairs_now": n}
        )
    return PowerPanel(
        n=n,
        threshold=threshold,
        marginals=marg,
        curve=pd.DataFrame(
            curve_rows, columns=["true_kappa", "p_pass_point", "p_pass_lower_bound"]
        ),
        sizes=pd.DataFrame(size_rows, columns=["kappa", "half_width", "pairs_needed", "pairs_now"]),
        note="; ".join(dict.fromkeys(notes)),
    )


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
    the case's metadata and its turns as ``(role, text)`` pairs.
    """
    bins = list(catalogue.constants.bins)
    rank = {b: i for i, b in enumerate(bins)}
    rows = complete_rows(gated_rows(pairs[pairs["dimension"] == dimension]))
    rows = rows[rows["judge_bin"] != rows["human_bin"]]
    if rows.empty or limit <= 0:
        return []
    gap = (rows["judge_bin"].map(rank) - rows["human_bin"].map(rank)).abs()
    rows = rows.assign(_gap=gap).sort_values(["_gap", "case_id"], ascending=[False, True])
    out = []
    for rec in rows.head(limit).to_dict(orient="records"):
        case = catalogue.case(str(rec["case_id"]))
        out.append(
            {
                "case_id": case.id,
                "locale": case.locale,
                "stratum": case.stratum,
                "judge": rec["judge_bin"],
                "human": rec["human_bin"],
                "turns": [(t.role, t.text) for t in case.turns],
            }
        )
    return out


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
        return HeldoutStatus(False, str(exc), seals)
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
    :func:`disagreements` (``judge`` reads ``v1 high → v2 low``).
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
