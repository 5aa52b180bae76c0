"""Records of a gate verdict: reasons with ADR citations, per-dimension and overall."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from evalkit._display import (
    Markup,
    badge,
    card,
    esc,
    frame_table,
    grid,
    interval,
    key_values,
    num,
    paragraph,
)

Severity = Literal["hard_fail", "fail", "note"]

#: Where each rule of the gate is decided (docs/adr/).
ADR = {
    "adr-0002": "docs/adr/0002-recall-over-precision-self-harm.md",
    "adr-0003": "docs/adr/0003-frozen-constants.md",
    "adr-0004": "docs/adr/0004-rebalance-corpus-not-constants.md",
    "adr-0005": "docs/adr/0005-relock-gate-hard-fails.md",
    "adr-0006": "docs/adr/0006-presence-gated-self-harm.md",
    "adr-0008": "docs/adr/0008-sealed-heldout-revalidation.md",
    "adr-0010": "docs/adr/0010-open-rules-of-the-constructs.md",
    "adr-0011": "docs/adr/0011-catalogue-audit-ceiling.md",
    "adr-0012": "docs/adr/0012-several-labelers-and-the-human-ceiling.md",
    "adr-0013": "docs/adr/0013-ratified-constants.md",
    "adr-0014": "docs/adr/0014-minimum-pairs-per-dimension.md",
    "adr-0015": "docs/adr/0015-hash-chained-seals.md",
    "adr-0016": "docs/adr/0016-one-judge-and-injection-canaries.md",
    "adr-0017": "docs/adr/0017-exploratory-studies.md",
    "adr-0027": "docs/adr/0027-repeat-samples-and-the-gated-answer.md",
    "adr-0030": "docs/adr/0030-gate-evidence-is-checked-at-gate-time.md",
}


@dataclass(frozen=True)
class Reason:
    """One rule that applied: a short code, a sentence for people, and its ADR."""

    code: str
    severity: Severity
    message: str
    adr: str

    def __str__(self) -> str:
        return f"[{self.severity}] {self.message} ({self.adr.upper()})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "adr": self.adr.upper(),
            "adr_path": ADR.get(self.adr, ""),
        }

    def adr_markup(self) -> Markup:
        """The ADR id, its file as a tooltip (a notebook has no report to link to)."""
        path = ADR.get(self.adr, "")
        return Markup(f'<span title="{esc(path)}">{esc(self.adr.upper())}</span>')


#: Inline style of a blocking reason's first cell (a red left border, as in the reports).
_BLOCKING = "border-left: 4px solid #cf222e;"


def reasons_table(reasons: tuple[Reason, ...], caption: str = "Reasons") -> Markup:
    """The reasons as a table: severity, what the gate found, the rule's ADR."""
    rows = [{"severity": r.severity, "message": r.message, "adr": r.adr_markup()} for r in reasons]
    return grid(
        rows,
        {"severity": "Severity", "message": "What the gate found", "adr": "Rule (ADR)"},
        caption=caption,
        empty="No reason recorded.",
        max_rows=None,
        row_style=[_BLOCKING if r.severity != "note" else None for r in reasons],
        row_class=["ek-row-fail" if r.severity != "note" else None for r in reasons],
    )


@dataclass(frozen=True)
class DimensionVerdict:
    """The gate's decision on one dimension, with every number it rests on."""

    dimension: str
    verdict: Literal["PASS", "FAIL"]
    kappa: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    reasons: tuple[Reason, ...]
    boot_low: float | None = None
    boot_high: float | None = None
    kappa_status: str = "ok"
    threshold: float = 0.0
    recall: dict[str, Any] | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    apart: dict[str, Any] = field(default_factory=dict)
    """Diagnostic and injection-canary rows, reported on their own, never in kappa."""
    advice: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    """Beside the verdict, never moving it: settledness, and with several labelers the
    human ceiling, the paired judge-minus-human difference and the alt-test (ADR-0012)."""

    @property
    def hard_fails(self) -> tuple[Reason, ...]:
        """The reasons that fail the dimension whatever kappa is."""
        return tuple(r for r in self.reasons if r.severity == "hard_fail")

    def summary(self) -> str:
        """One line: the kappa with its intervals, the pairs and the threshold."""
        if self.kappa is None:
            return f"kappa not meaningful ({self.kappa_status}), {self.n} pairs"
        return (
            f"kappa {num(self.kappa)}, 95% CI {interval(self.ci_low, self.ci_high)} "
            f"(bootstrap {interval(self.boot_low, self.boot_high)}), {self.n} pairs, "
            f"threshold {num(self.threshold, 2)}"
        )

    def __repr__(self) -> str:
        lines = [f"DimensionVerdict {self.dimension}: {self.verdict}", f"  {self.summary()}"]
        lines += [f"  {r}" for r in self.reasons]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        numbers = key_values(
            [
                ("Cohen's kappa", self.kappa),
                ("95% CI (Wald)", interval(self.ci_low, self.ci_high)),
                ("95% CI (bootstrap)", interval(self.boot_low, self.boot_high)),
                ("Pairs", self.n),
                ("Threshold", num(self.threshold, 2)),
                ("Kappa status", self.kappa_status),
            ]
        )
        hard = ", ".join(r.code for r in self.hard_fails)
        rules = self.rules_frame()
        return card(
            self.dimension,
            numbers,
            paragraph(Markup("<strong>Hard fails:</strong> "), hard) if hard else None,
            reasons_table(self.reasons),
            frame_table(rules, caption="Agreement per rule (explains, does not gate)")
            if len(rules)
            else None,
            verdict=self.verdict,
        )

    def rules_frame(self) -> pd.DataFrame:
        """``evidence["rules"]`` as a frame (ADR-0024), numbers rounded to 3 places; empty
        when the catalogue records no rule cases."""
        from evalkit.gate._rules import RULE_COLUMNS

        frame = pd.DataFrame(self.evidence.get("rules") or [], columns=list(RULE_COLUMNS))
        for col in ("agreement", "kappa", "ci_low", "ci_high"):
            if col in frame:
                frame[col] = frame[col].astype(float).round(3)
        return frame

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "kappa": self.kappa,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "boot_low": self.boot_low,
            "boot_high": self.boot_high,
            "kappa_status": self.kappa_status,
            "threshold": self.threshold,
            "n": self.n,
            "reasons": [r.to_dict() for r in self.reasons],
            "recall": self.recall,
            "counts": self.counts,
            "apart": self.apart,
            "advice": self.advice,
            "diagnostics": self.diagnostics,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class GateVerdict:
    """PASS only if every gated dimension passes; an exploratory verdict never passes."""

    overall: Literal["PASS", "FAIL"]
    dimensions: dict[str, DimensionVerdict]
    hashes: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    """Who was gated: judge spec, backend, model and responding model (ADR-0016)."""
    exploratory: tuple[str, ...] = ()
    """Why this verdict describes a variant and is no launch verdict (ADR-0017), e.g.
    ``self_harm rubric v1 is studied; v3 is in force``; empty for the gate's own. Then
    ``overall`` is what the gate would find on the variant, and ``passed`` is False."""

    @property
    def passed(self) -> bool:
        """The launch verdict: PASS, and not exploratory."""
        return self.overall == "PASS" and not self.exploratory

    def _overall_text(self) -> str:
        if not self.exploratory:
            return self.overall
        return f"exploratory, not gate evidence (would {self.overall})"

    def _judge_text(self) -> str:
        judge = self.judge or {}
        name = judge.get("spec") or judge.get("model") or judge.get("judge")
        return f"judge {name}" if name else ""

    def __repr__(self) -> str:
        judge = self._judge_text()
        lines = [f"GateVerdict: {self._overall_text()}" + (f" ({judge})" if judge else "")]
        lines += [f"  {reason}" for reason in self.exploratory]
        width = max((len(d) for d in self.dimensions), default=0)
        for dim, v in self.dimensions.items():
            blocking = [r.code for r in v.reasons if r.severity != "note"]
            tail = f"; blocking: {', '.join(blocking)}" if blocking else ""
            lines.append(f"  {dim:<{width}}  {v.verdict}  {v.summary()}{tail}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for dim, v in self.dimensions.items():
            blocking = [r for r in v.reasons if r.severity != "note"]
            rows.append(
                {
                    "dimension": dim,
                    "verdict": badge(f"would {v.verdict}" if self.exploratory else v.verdict),
                    "kappa": v.kappa if v.kappa is not None else v.kappa_status,
                    "ci": interval(v.ci_low, v.ci_high),
                    "n": v.n,
                    "threshold": num(v.threshold, 2),
                    "blocking": Markup(
                        "; ".join(f"{esc(r.code)} ({r.adr_markup()})" for r in blocking)
                    )
                    or Markup("—"),
                }
            )
        table = grid(
            rows,
            {
                "dimension": "Dimension",
                "verdict": "Verdict",
                "kappa": "Cohen's kappa",
                "ci": "95% CI (Wald)",
                "n": "Pairs",
                "threshold": "Threshold",
                "blocking": "Blocking reasons",
            },
            row_style=[
                _BLOCKING if v.verdict == "FAIL" else None for v in self.dimensions.values()
            ],
        )
        if self.exploratory:
            return card(
                "Exploratory verdict — not gate evidence (ADR-0017)",
                paragraph("Why: " + "; ".join(self.exploratory) + "."),
                table,
                "What the gate would find on these rows; it describes the variant and never "
                "gates a launch.",
                verdict="exploratory",
                subtitle=self._judge_text(),
            )
        return card(
            "Gate verdict",
            table,
            "The gate passes only if every gated dimension passes.",
            verdict=self.overall,
            subtitle=self._judge_text(),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "dimensions": {d: v.to_dict() for d, v in self.dimensions.items()},
            "hashes": self.hashes,
            "judge": self.judge,
            **({"exploratory": list(self.exploratory)} if self.exploratory else {}),
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)
