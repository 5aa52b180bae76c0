"""``evalkit gate``: print the relock verdict; exit 0 on PASS, 1 on FAIL, 2 on bad input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError, GateInputError

if TYPE_CHECKING:
    from evalkit.catalogue import Catalogue
    from evalkit.gate._verdict import GateVerdict


def register(subparsers: Any) -> None:
    gate = subparsers.add_parser("gate", help="decide the relock gate from a judge ledger")
    gate.add_argument("--ledger", required=True, help="judge ledger (SQLite or JSONL)")
    gate.add_argument(
        "--labels",
        help="labels CSV (default: the catalogue's consensus); held-out: the sealed sheet. "
        "Calibration labels the catalogue does not declare are never gate evidence",
    )
    gate.add_argument("--split", default="calibration", choices=["calibration", "heldout"])
    gate.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    gate.add_argument("--json", action="store_true", help="print the verdict as JSON")
    gate.add_argument(
        "--judge-spec",
        help="the judge to gate when the ledger holds several (the others' rows are set aside)",
    )
    gate.add_argument(
        "--junit",
        metavar="FILE.xml",
        help="also write the verdict as JUnit XML (on pass and fail; never on exit 2)",
    )
    gate.add_argument(
        "--markdown",
        metavar="FILE.md",
        help="also write the verdict table and reasons as Markdown, for a pull request",
    )
    gate.set_defaults(func=run)


def _labels(args: argparse.Namespace, catalogue: Catalogue) -> Any:
    if args.split == "heldout":
        from evalkit.heldout import sealed_labels

        return sealed_labels(catalogue, args.labels)
    if args.labels is None:
        return list(catalogue.labels)
    from evalkit.catalogue import read_labels

    by_id = {c.id: c for c in catalogue.cases}
    labels, problems = read_labels(Path(args.labels), by_id, catalogue.constants)
    if problems:
        raise GateInputError(
            f"{len(problems)} problem(s) in the labels file {args.labels}:\n"
            + "\n".join(f"  - {p}" for p in problems)
        )
    return labels


def render_table(verdict: GateVerdict) -> str:
    """The verdict as a plain-text table followed by every reason."""
    from evalkit.gate._threshold import fmt_interval, fmt_value

    lines = [f"{'dimension':<14}{'verdict':<9}{'kappa':>8}{'95% CI':>18}{'n':>6}"]
    for dim, v in verdict.dimensions.items():
        kappa, ci = fmt_value(v.kappa), fmt_interval(v.ci_low, v.ci_high)
        lines.append(f"{dim:<14}{v.verdict:<9}{kappa:>8}{ci:>18}{v.n:>6}")
    lines.append(f"overall: {verdict.overall}")
    if verdict.judge:
        who = verdict.judge
        if "judges" in who:
            lines.append(f"judges: {', '.join(str(j['judge']) for j in who['judges'])}")
        else:
            answered = who.get("response_model")
            lines.append(
                f"judge: {who.get('judge')} (backend {who.get('backend')}, model "
                f"{who.get('model')}, "
                + (f"answered by {answered})" if answered else "no responding model recorded)")
            )
    if verdict.hashes.get("labels"):
        lines.append(f"labels: {verdict.hashes['labels']}")
    for dim, v in verdict.dimensions.items():
        for reason in v.reasons:
            lines.append(f"  {dim}: {reason}")
        for row in v.advice:
            lines.append(
                f"  {dim}: advice: add {row['add']} case(s) labelled "
                f"{row['bin']} in {row['locale']}"
            )
        lines += [f"  {dim}: evidence: {text}" for text in evidence_lines(v.evidence)]
    return "\n".join(lines)


def evidence_lines(evidence: dict[str, Any]) -> list[str]:
    """The human ceiling, the paired difference and the alt-test in one line each."""
    humans = evidence.get("humans")
    if not humans:
        return []
    out = []
    rows = {r["rater"]: r for r in humans["ceiling"]}
    judge = rows.get("judge", {}).get("kappa")
    human = humans.get("human_kappa_mean")
    if judge is not None and human is not None:
        out.append(
            f"judge kappa {judge:.3f} against the labelers vs {human:.3f} for a labeler against "
            f"the others ({', '.join(humans['labelers'])})"
        )
    paired = humans["judge_vs_humans"]
    if paired.get("difference") is not None:
        verdict = "non-inferior" if paired["non_inferior"] else "not shown non-inferior"
        out.append(
            f"judge minus human {paired['difference']:+.3f} [{paired['ci_low']:+.3f}, "
            f"{paired['ci_high']:+.3f}]: {verdict} at margin {humans['margin']:.2f}"
        )
    alt = humans["alt_test"]
    if alt.get("winning_rate") is not None:
        out.append(
            f"alt-test winning rate {alt['winning_rate']:.2f}, advantage probability "
            f"{alt['advantage_probability']:.2f} (epsilon {humans['epsilon']:.2f}): "
            f"{'passes' if alt['passed'] else 'does not pass'}"
        )
    return out


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top, so that ``evalkit gate --help`` starts fast.
    from evalkit.catalogue import load
    from evalkit.gate._ci_formats import remove_stale_reports, write_ci_reports
    from evalkit.gate._evaluate import evaluate
    from evalkit.gate._labels import label_history

    # A report left by an earlier run must not pass for this run's when this one has no
    # verdict (exit 2 or 3): remove it first, write the new one only once there is a verdict.
    for path in remove_stale_reports(args.junit, args.markdown):
        print(f"evalkit gate: removed {path} of an earlier run", file=sys.stderr)
    try:
        catalogue = load(args.catalogue)
        from evalkit.judge import load_ledger

        ledger = load_ledger(args.ledger, catalogue=catalogue)
        if ledger.empty:
            raise GateInputError(f"{args.ledger}: the ledger holds no judge answers")
        labels = _labels(args, catalogue)
        if args.split == "heldout":
            from evalkit.heldout import assert_sealed_before

            assert_sealed_before(catalogue, ledger, source=str(args.ledger))
        verdict = evaluate(
            ledger,
            labels,
            catalogue,
            split=args.split,
            judge_spec=args.judge_spec,
            labels_from=args.labels,
            label_history=label_history(catalogue) if args.split == "calibration" else None,
        )
        written = write_ci_reports(verdict, junit=args.junit, markdown=args.markdown)
    except (EvalkitError, FileNotFoundError, ValueError) as exc:
        print(f"evalkit gate: unusable input: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    print(verdict.to_json(indent=2) if args.json else render_table(verdict))
    return 0 if verdict.passed else 1
