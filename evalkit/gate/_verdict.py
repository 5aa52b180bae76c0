"""Records of a gate verdict: reasons with ADR citations, per-dimension and overall."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

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
    """PASS only if every gated dimension passes."""

    overall: Literal["PASS", "FAIL"]
    dimensions: dict[str, DimensionVerdict]
    hashes: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    """Who was gated: judge spec, backend, model and responding model (ADR-0016)."""

    @property
    def passed(self) -> bool:
        return self.overall == "PASS"

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "dimensions": {d: v.to_dict() for d, v in self.dimensions.items()},
            "hashes": self.hashes,
            "judge": self.judge,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)
