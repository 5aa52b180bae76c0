"""``evalkit prevalence``: the corrected share of each bin; ``evalkit prevalence plan``: which
cases to label next, as a blind template.

POOL is a judged ledger (the judge's bins on the replies to measure); LABELLED a judged
ledger whose cases carry human labels in the catalogue (or ``--labels``). Both are read
as the gate reads a ledger (:func:`evalkit.gate.pairs`: final turn, gated answer, rubric
and constants in force, one judge), all splits, gated strata only (canaries and
diagnostics apart).
Failed judge answers are left out of the pool and counted on stderr. Both ledgers are
validated against the catalogue (a JSONL must be a ledger export, not frame rows) and
must come from one and the same judge (:mod:`._sources`): otherwise exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from evalkit.errors import CatalogueError, EvalkitError

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.catalogue import Catalogue

# The machinery (pandas, the catalogue, the estimators) is imported in the functions that
# use it, so that ``evalkit prevalence --help`` starts fast.

#: Columns of the pool and labelled frames the CLI builds (``by`` columns come from here).
STRATUM_COLUMNS = ("locale", "stratum", "template_family")
#: Dimension whose "missed" share is reported (signal present: the latest user turn).
MISSED_DIMENSION = "self_harm"
#: Budgets whose expected interval widths ``plan`` prints.
BUDGETS = (50, 100, 200)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "prevalence", help="corrected share of each bin from a judged pool and a labelled set"
    )
    _common(parser, required=False)
    parser.add_argument("--by", help="stratify by these columns, comma-separated")
    parser.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument("--json", action="store_true", help="print a list of JSON records")
    parser.set_defaults(func=run)
    sub = parser.add_subparsers(dest="prevalence_command", metavar="ACTION")
    plan = sub.add_parser("plan", help="choose cases to label next; write a blind template")
    _common(plan, required=True)
    plan.add_argument("--budget", type=int, required=True, help="expected number of labels")
    plan.add_argument("--out", required=True, help="the blind template to write (CSV)")
    plan.add_argument("--seed", type=int, default=0, help="seed of the Poisson draw (0)")
    plan.set_defaults(func=run_plan)


def _common(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument("--ledger", required=required, help="POOL: the judged ledger")
    parser.add_argument(
        "--labelled", required=required, help="a judged ledger whose cases have human labels"
    )
    parser.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    parser.add_argument("--labels", help="labels CSV (default: the catalogue's labels)")
    parser.add_argument("--dimension", help="one dimension (default: every gated dimension)")


def _labels(args: argparse.Namespace, catalogue: Catalogue) -> Any:
    if args.labels is None:
        return list(catalogue.labels)
    from evalkit.catalogue import read_labels

    by_id = {c.id: c for c in catalogue.cases}
    labels, problems = read_labels(Path(args.labels), by_id, catalogue.constants)
    if problems:
        raise CatalogueError(problems)
    return labels


def _dimensions(args: argparse.Namespace, catalogue: Catalogue) -> list[str]:
    from evalkit.prevalence._frames import PrevalenceInputError

    gated = list(catalogue.constants.gated_dimensions)
    if args.dimension is None:
        return gated
    if args.dimension not in gated:
        raise PrevalenceInputError(f"--dimension: {args.dimension!r} is not one of {gated}")
    return [args.dimension]


def _pairs(
    ledger: pd.DataFrame, catalogue: Catalogue, labels: Any, dims: list[str]
) -> pd.DataFrame:
    """Pairs of a ledger frame as the gate reads them (:func:`evalkit.gate.pairs`), gated
    strata, all splits, judged cases only, with the case's signal presence (``present``)."""
    from evalkit.catalogue import PRESENT_SIGNALS
    from evalkit.gate import pairs

    frame = pairs(ledger, catalogue, split=None, dimension=dims, labels=labels)
    frame = frame[frame["status"].notna()]  # a label without a judge answer is not judged
    signal = catalogue.cases_frame().set_index("case_id")["latest_signal"]
    present = frame["case_id"].map(signal).isin(PRESENT_SIGNALS)
    return frame.assign(present=present.to_numpy(dtype=bool))


def _frames(
    args: argparse.Namespace, catalogue: Catalogue, dims: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    from evalkit.judge import load_ledger
    from evalkit.prevalence._sources import same_judge

    labels = _labels(args, catalogue)
    pool_ledger = load_ledger(args.ledger, catalogue=catalogue)  # validated: evidence
    labelled_ledger = load_ledger(args.labelled, catalogue=catalogue)
    judge = same_judge(
        pool_ledger, labelled_ledger, pool_name=args.ledger, labelled_name=args.labelled
    )
    print(f"judge of the pool and the labelled set: {judge}", file=sys.stderr)
    pool = _pairs(pool_ledger, catalogue, labels, dims)
    failed = pool["judge"].isna()
    if failed.any():
        print(
            f"note: {int(failed.sum())} failed judge answer(s) left out of the pool",
            file=sys.stderr,
        )
    pool = pool[~failed]
    labelled = _pairs(labelled_ledger, catalogue, labels, dims)
    labelled = labelled[labelled["judge"].notna() & labelled["human"].notna()]
    return pool, labelled


def prevalence_table(
    pool: pd.DataFrame,
    labelled: pd.DataFrame,
    bins: list[str],
    dims: list[str],
    *,
    by: list[str] | None,
    level: float,
) -> pd.DataFrame:
    """:func:`corrected_prevalence` per dimension (and the self-harm "missed" share),
    with a ``dimension`` column first."""
    import pandas as pd

    from evalkit.prevalence._corrected import corrected_prevalence, missed_share

    tables = []
    for dim in dims:
        p, lab = pool[pool["dimension"] == dim], labelled[labelled["dimension"] == dim]
        table = corrected_prevalence(p, lab, bins, by=by or None, level=level)
        if dim == MISSED_DIMENSION:
            missed = missed_share(p, lab, bins, present="present", by=by or None, level=level)
            table = pd.concat([table, missed], ignore_index=True)
        tables.append(table.assign(dimension=dim))
    out = pd.concat(tables, ignore_index=True)
    return out[["dimension", *[c for c in out.columns if c != "dimension"]]]


def render(table: pd.DataFrame, level: float) -> str:
    """The table as plain text, one line per estimator, stratum and bin."""
    from evalkit.gate._threshold import fmt_interval  # here: `prevalence --help` stays light

    head = f"{'dimension':<13}{'estimator':<12}{'stratum':<24}{'bin':<9}{'share':>7}"
    lines = [head + f"{f'{level:.0%} CI':>18}{'n_lab':>7}{'n_pool':>8}  status"]
    for row in table.itertuples(index=False):
        ok = row.status == "ok"
        share = f"{row.estimate:.3f}" if ok else "—"
        low, high = cast(float, row.ci_low), cast(float, row.ci_high)
        ci = fmt_interval(low, high) if ok else "—"
        stratum = "overall" if row.stratum is None else str(row.stratum)
        lines.append(
            f"{row.dimension:<13}{row.estimator:<12}{stratum:<24}{row.bin:<9}{share:>7}"
            f"{ci:>18}{row.n_labelled:>7}{row.n_pool:>8}  {row.status}"
        )
    return "\n".join(lines)


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in table.to_dict(orient="records"):
        out.append(
            {
                str(k): (None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in rec.items()
            }
        )
    return out


def run(args: argparse.Namespace) -> int:
    from evalkit.catalogue import load
    from evalkit.prevalence._frames import PrevalenceInputError

    if args.ledger is None or args.labelled is None:
        print(
            "evalkit prevalence: unusable input: --ledger and --labelled are required",
            file=sys.stderr,
        )
        return 2
    try:
        catalogue = load(args.catalogue)
        dims = _dimensions(args, catalogue)
        by = [c.strip() for c in args.by.split(",") if c.strip()] if args.by else []
        unknown = [c for c in by if c not in STRATUM_COLUMNS]
        if unknown:
            raise PrevalenceInputError(
                f"--by: unknown column(s) {unknown}; choose from {list(STRATUM_COLUMNS)}"
            )
        pool, labelled = _frames(args, catalogue, dims)
        bins = list(catalogue.constants.bins)
        table = prevalence_table(pool, labelled, bins, dims, by=by, level=args.level)
    except (EvalkitError, FileNotFoundError, ValueError) as exc:
        print(f"evalkit prevalence: unusable input: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(_records(table), indent=2) if args.json else render(table, args.level))
    return 0


def _unlabelled(pool: pd.DataFrame, labelled: pd.DataFrame) -> pd.DataFrame:
    """The pool cases a plan may choose: those not in the labelled set (a pool that
    overlaps it must not send its cases to be labelled again); the others are counted on
    stderr."""
    known = pool["case_id"].isin(set(labelled["case_id"]))
    if known.any():
        print(
            f"note: {int(known.sum())} pool case(s) are in the labelled set already and are "
            "not planned again",
            file=sys.stderr,
        )
    return pool[~known]


def sidecar_path(out: str | Path) -> Path:
    """Where ``plan`` records the inclusion probabilities: beside the template, same stem,
    ``.plan.json``. The template itself keeps the held-out columns exactly."""
    path = Path(out)
    return path.with_name(path.stem + ".plan.json")


def run_plan(args: argparse.Namespace) -> int:
    from evalkit.catalogue import load
    from evalkit.heldout import template_csv
    from evalkit.prevalence._frames import PrevalenceInputError
    from evalkit.prevalence._plan import SELECTED, expected_widths, plan_labels
    from evalkit.prevalence._weighted import INCLUSION

    try:
        catalogue = load(args.catalogue)
        dims = _dimensions(args, catalogue)
        if args.budget <= 0:
            raise PrevalenceInputError(f"--budget: must be positive, got {args.budget}")
        pool, labelled = _frames(args, catalogue, dims)
        bins = list(catalogue.constants.bins)
        # One plan for all the dimensions asked: a case's odds follow its least reliable
        # judge bin, the first dimension's pool fixing the cases (each case once).
        dim = dims[0]
        pool_d = pool[pool["dimension"] == dim].drop_duplicates("case_id")
        cal_d = labelled[labelled["dimension"] == dim]
        pool_d = _unlabelled(pool_d, cal_d)
        if pool_d.empty or cal_d.empty:
            raise PrevalenceInputError(
                f"{dim}: the pool or the labelled set holds no judged case of this dimension"
            )
        planned = plan_labels(pool_d, cal_d, args.budget, bins=bins, seed=args.seed)
        widths = expected_widths(pool_d, cal_d, bins, BUDGETS)
    except (EvalkitError, FileNotFoundError, ValueError) as exc:
        print(f"evalkit prevalence plan: unusable input: {exc}", file=sys.stderr)
        return 2
    chosen = planned[planned[SELECTED]]
    cases = [catalogue.case(c) for c in chosen["case_id"]]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(template_csv(catalogue, cases), encoding="utf-8-sig", newline="")
    sidecar = {
        "template": out.name,
        "dimension": dim,
        "pool_ledger": str(args.ledger),
        "calibration_ledger": str(args.labelled),
        "budget": args.budget,
        "seed": args.seed,
        "n_pool": len(planned),
        "design": "poisson",
        "cases": {
            str(r.case_id): {"inclusion_probability": float(getattr(r, INCLUSION))}
            for r in chosen.itertuples(index=False)
        },
        "expected_widths": widths.to_dict(orient="records"),
    }
    sidecar_path(out).write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    print(
        f"wrote {out}: {len(cases)} case(s) chosen from a pool of {len(planned)} "
        f"({dim}, expected {args.budget}); inclusion probabilities in {sidecar_path(out)}"
    )
    print(f"expected {dim} interval width (95%) by budget, planned vs random labelling:")
    for (budget, b), grp in widths.groupby(["budget", "bin"], sort=False):
        w = grp.set_index("design")["expected_width"]
        print(f"  {budget:>4} labels  {b:<8} planned {w['planned']:.3f}  random {w['random']:.3f}")
    return 0
