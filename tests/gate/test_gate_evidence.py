"""Evidence beside the verdict (ADR-0012): ceiling, paired difference, alt-test, settledness.

None of it moves the verdict; these tests pin that it is there, computed from the label
sets, and that it says when the labels limit what can be shown.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

from evalkit.agreement import gate_power
from evalkit.catalogue import load
from evalkit.gate import evaluate
from tests.factory import agreeing_ledger, build_balanced


def _second_labeler(root: Path, flip_share: float, seed: int = 0) -> None:
    """A second label set: the first set's bins with ``flip_share`` of them changed."""
    rng = random.Random(seed)
    rows = list(csv.reader((root / "labels" / "gate.csv").open(encoding="utf-8")))[1:]
    bins = ["low", "partial", "high"]
    with (root / "labels" / "second.csv").open("w", newline="", encoding="utf-8") as h:
        w = csv.writer(h)
        w.writerow(["case_id", "dimension", "bin", "labeler", "note"])
        for case_id, dim, bin_, _, _ in rows:
            if rng.random() < flip_share:
                bin_ = rng.choice([b for b in bins if b != bin_])
            w.writerow([case_id, dim, bin_, "second", ""])


def test_two_labelers_put_the_judge_among_them(tmp_path: Path) -> None:
    root = tmp_path / "catalogues"
    build_balanced(root, copies=4)
    _second_labeler(root, flip_share=0.1)
    cat = load(root)
    verdict = evaluate(agreeing_ledger(cat), cat.labels, cat, n_resamples=200)
    ev = verdict.dimensions["self_harm"].evidence
    raters = {row["rater"]: row for row in ev["humans"]["ceiling"]}
    assert set(raters) == {"gate", "second", "judge"}
    assert raters["judge"]["kind"] == "judge" and raters["gate"]["kind"] == "human"
    assert ev["humans"]["alt_test"]["winning_rate"] is not None
    assert ev["humans"]["judge_vs_humans"]["difference"] is not None
    assert "settledness" in ev
    assert verdict.to_dict()["dimensions"]["self_harm"]["evidence"] == ev
    assert verdict.hashes["consensus_rule"] == "majority of the label sets; ties: the lower bin"
    assert verdict.hashes["label_sets"] == ["gate", "second"]


def test_labels_limit_is_said_when_humans_disagree(tmp_path: Path) -> None:
    root = tmp_path / "catalogues"
    build_balanced(root, copies=4)
    _second_labeler(root, flip_share=0.6)
    cat = load(root)
    verdict = evaluate(agreeing_ledger(cat), cat.labels, cat, n_resamples=200)
    codes = {r.code for v in verdict.dimensions.values() for r in v.reasons}
    assert "labels_limit" in codes
    limit = next(
        r for v in verdict.dimensions.values() for r in v.reasons if r.code == "labels_limit"
    )
    assert limit.severity == "note" and limit.adr == "adr-0012"


def test_one_labeler_no_human_evidence(tmp_path: Path) -> None:
    cat, ledger = build_balanced(tmp_path / "catalogues", copies=2)
    verdict = evaluate(ledger, cat.labels, cat, n_resamples=200)
    assert "humans" not in verdict.dimensions["self_harm"].evidence


def test_an_interval_across_the_threshold_is_unsettled(tmp_path: Path) -> None:
    """20 pairs, 3 answers moved one bin: kappa 0.758 with a Wald interval from 0.509.

    20 pairs are under the frozen minimum (ADR-0014): the one blocking reason is that; the
    settledness evidence beside it is what this test pins.
    """
    cat, ledger = build_balanced(tmp_path / "catalogues", copies=1)
    bins = ["low", "partial", "high"]
    rows = ledger.copy()
    sh = rows.index[rows["dimension"] == "self_harm"][:3]
    rows.loc[sh, "bin"] = [bins[(bins.index(b) + 1) % 3] for b in rows.loc[sh, "bin"]]
    v = evaluate(rows, cat.labels, cat, n_resamples=200).dimensions["self_harm"]
    blocking = {r.code for r in v.reasons if r.severity in ("hard_fail", "fail")}
    assert blocking == {"too_few_pairs"} and v.ci_low is not None and v.ci_low < v.threshold
    settled = v.evidence["settledness"]
    assert settled["status"] == "unsettled"
    # Above the threshold, "settled" means an 80% chance that the lower bound clears it, if
    # the true kappa were the observed 0.758 with these marginals (gate_power), at 20 + 95.
    assert settled["settle_method"] == "gate_power" and settled["further_pairs"] == 95
    judge = list(rows.loc[rows["dimension"] == "self_harm", "bin"])
    human = [lab.bin for lab in cat.labels if lab.dimension == "self_harm"]
    marg = tuple([x.count(b) / len(x) for b in bins] for x in (judge, human))
    assert gate_power(v.kappa, 115, 0.60, marg, n_sim=1000, seed=0).power >= 0.8
    assert gate_power(v.kappa, 114, 0.60, marg, n_sim=1000, seed=0).power < 0.8
    assert 0 < settled["false_pass_rate"] < 1
    assert "unsettled" in {r.code for r in v.reasons}
    untouched = evaluate(ledger, cat.labels, cat, n_resamples=200).dimensions["self_harm"]
    assert untouched.evidence["settledness"]["status"] == "settled"  # kappa 1, interval [1, 1]
