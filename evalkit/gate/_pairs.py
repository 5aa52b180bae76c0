"""Join judge answers with human labels: the one source of the pairs every kappa reads.

:func:`pairs` is the public frame: the pairs of a split exactly as the gate reads them,
one row per case and dimension, with columns every agreement function accepts as they are
(``judge`` and ``human``: :func:`evalkit.agreement.agreement_table`,
:func:`evalkit.gate.breakdown`, ``cohens_kappa(pairs["judge"], pairs["human"], bins)``).

Underneath, the gate, every study page and :func:`evalkit.construct.compare_versions` take
their pairs from :func:`study_pairs` (final turn, gated answer, produced under the framing,
constants and rubric asked for) and select what enters kappa with :func:`gated_rows` and
:func:`complete_rows`; :func:`kappa_pairs` is the two in one. A page that shows another set
on purpose (every stratum, say) says so beside it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import GATED_STRATA, Catalogue, Label
from evalkit.errors import GateInputError
from evalkit.gate._identity import select_judge
from evalkit.gate._provenance import expected_hashes, matching_rows, stale_requests

#: Columns of :func:`join_pairs` and :func:`pairs`, in order (see :func:`pairs`).
PAIR_COLUMNS = (
    "case_id",
    "dimension",
    "turn",
    "judge",
    "human",
    "status",
    "signal_present",
    "locale",
    "stratum",
    "split",
    "template_family",
    "injection_attempt",
    "rationale",
)


def labels_frame(labels: pd.DataFrame | Sequence[Label] | str | Path) -> pd.DataFrame:
    """Human labels as a frame with ``case_id``, ``dimension``, ``bin`` (and ``labeler``).

    Accepts a frame, a sequence of :class:`~evalkit.catalogue.Label`, or a path to a
    labels CSV in the catalogue format.
    """
    if isinstance(labels, pd.DataFrame):
        frame = labels
    elif isinstance(labels, str | Path):
        frame = pd.read_csv(labels, dtype=str, keep_default_na=False)
    else:
        frame = pd.DataFrame([lab.model_dump() for lab in labels])
    missing = {"case_id", "dimension", "bin"} - set(frame.columns)
    if missing:
        raise ValueError(f"labels lack column(s) {sorted(missing)}")
    return frame


def final_turn_rows(ledger: pd.DataFrame) -> pd.DataFrame:
    """Ledger rows that score the last turn judged for each case and dimension.

    A ledger may hold per-turn judgements (the onset study); agreement and the gate read
    only the reply that the label describes, which is the final one.
    """
    if ledger.empty or "turn" not in ledger.columns:
        return ledger
    turns = ledger["turn"].fillna(-1)
    last = turns.groupby([ledger["case_id"], ledger["dimension"]]).transform("max")
    return ledger[turns == last]


def join_pairs(
    ledger: pd.DataFrame,
    labels: pd.DataFrame | Sequence[Label],
    catalogue: Catalogue | None = None,
) -> pd.DataFrame:
    """One row per (case, dimension) scored by the judge or labelled by a human.

    Outer join of the final-turn judge answers with the labels, so that a scored case
    without a label (``human`` missing) and a labelled case the judge never scored
    (``status`` missing) both stay visible. ``judge`` (the judge's bin) is missing whenever
    the judge answer was not ``ok``; ``human`` is the label's bin. Case metadata (locale,
    stratum, split, template family) comes from ``catalogue`` when given, otherwise stays
    missing. When a ledger holds more than one final-turn answer for a case and
    dimension (repeat samples, the same turn judged in different call groupings, or a
    re-ask under other parameters), they are read together by the declared rule of
    :func:`gated_answers` (ADR-0027), never "the latest"; :func:`repeated_answers` counts
    such cases.
    """
    lab = labels_frame(labels)[["case_id", "dimension", "bin"]].rename(columns={"bin": "human"})
    cols = ["case_id", "dimension", "turn", "bin", "status"]
    optional = ("signal_present", "injection_attempt", "rationale")
    cols += [c for c in optional if c in ledger.columns]
    bins = tuple(catalogue.constants.bins) if catalogue is not None else None
    judged = final_answers(ledger, bins)[cols].rename(columns={"bin": "judge"})
    pairs = judged.merge(lab, on=["case_id", "dimension"], how="outer")
    pairs.loc[pairs["status"] != "ok", "judge"] = None
    if "signal_present" not in pairs.columns:
        pairs["signal_present"] = None
    if catalogue is not None:
        meta = catalogue.cases_frame()[["case_id", "locale", "stratum", "split", "template_family"]]
        pairs = pairs.merge(meta, on="case_id", how="left")
    for col in PAIR_COLUMNS:
        if col not in pairs.columns:
            pairs[col] = None
    return pairs[list(PAIR_COLUMNS)].sort_values(["dimension", "case_id"], ignore_index=True)


def final_answers(ledger: pd.DataFrame, bins: Sequence[str] | None) -> pd.DataFrame:
    """The answer read for each (case, dimension) of ``ledger``: its final-turn rows
    (:func:`final_turn_rows`), oldest first, one kept by :func:`gated_answers`
    (ADR-0027). Every reader of "the judge's answer to a case" takes it from here."""
    final = final_turn_rows(ledger)
    if "created_at" in final.columns:
        final = final.sort_values("created_at", kind="stable")
    return gated_answers(final, bins)


def gated_answers(final: pd.DataFrame, bins: Sequence[str] | None) -> pd.DataFrame:
    """One answer per (case, dimension) from final-turn rows sorted oldest first.

    The rule (ADR-0027): among the group's ``ok`` answers, the modal bin, a tie going to
    the lower bin in the frozen order (the recall-favouring reading); the row kept is the
    earliest answer with that bin. A group with no ``ok`` answer keeps its latest row (its
    status says why there is no bin). Without a known bin order (``bins`` None: a frame
    joined without a catalogue) a tie goes to the earliest answer. A single answer is
    kept as it is. Re-asking until the judge agrees therefore moves the gated bin only by
    outvoting the earlier answers, and the gate flags repeats that concentrate on
    disagreements.
    """
    if final.empty:
        return final
    key = ["case_id", "dimension"]
    size = final.groupby(key, sort=False)["status"].transform("size")
    if (size == 1).all():
        return final
    # One pass in plain Python over the repeated groups: a pandas operation per group
    # cost seconds on a ledger with a thousand repeated cases (issue 29).
    multi = final[size > 1]
    groups: dict[tuple[Any, Any], list[int]] = {}
    for i, group_key in enumerate(zip(multi["case_id"], multi["dimension"], strict=True)):
        groups.setdefault(group_key, []).append(i)  # first-seen order, as groupby(sort=False)
    status, found = multi["status"].to_numpy(), multi["bin"].to_numpy()
    order = {b: i for i, b in enumerate(bins or ())}

    def usable(i: int) -> bool:
        if status[i] != "ok":
            return False
        return found[i] in order if bins is not None else bool(pd.notna(found[i]))

    kept: list[int] = []
    for rows in groups.values():
        ok = [i for i in rows if usable(i)]
        if not ok:
            kept.append(rows[-1])
            continue
        counts = Counter(str(found[i]) for i in ok)  # first-seen order of the bins
        top = max(counts.values())
        tied = [b for b, n in counts.items() if n == top]
        best = min(tied, key=order.__getitem__) if bins is not None else tied[0]
        kept.append(next(i for i in ok if str(found[i]) == best))
    return pd.concat([final[size == 1], multi.iloc[kept]])


def repeated_answers(ledger: pd.DataFrame) -> pd.Series:
    """Per dimension, how many cases have more than one final-turn answer in ``ledger``."""
    final = final_turn_rows(ledger)
    if final.empty:
        return pd.Series(dtype="int64")
    counts = final.groupby(["dimension", "case_id"]).size()
    return (counts > 1).groupby(level="dimension").sum().astype("int64")


def gated_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """Rows of the strata that enter kappa; diagnostic and canary cases stay apart.

    Without case metadata (no ``stratum`` known: pairs built without a catalogue) every
    row is gated.
    """
    if pairs["stratum"].notna().any():
        return pairs[pairs["stratum"].isin(GATED_STRATA)]
    return pairs


def complete_rows(pairs: pd.DataFrame, bins: Sequence[str]) -> pd.DataFrame:
    """Rows with a usable judge bin (one of the frozen ``bins``) and a human label."""
    return pairs[pairs["judge"].isin(list(bins)) & pairs["human"].notna()]


def dimension_pairs(
    rows: pd.DataFrame,
    labels: pd.DataFrame | Sequence[Label],
    catalogue: Catalogue | None,
    dimension: str,
    split: str | None,
) -> pd.DataFrame:
    """:func:`join_pairs` of one dimension's ledger ``rows`` restricted to ``split``.

    ``rows`` are already the rows to read (hashes checked by the caller); labels of other
    dimensions and, with a catalogue, of other splits are left out.
    """
    pairs = join_pairs(rows, labels, catalogue)
    pairs = pairs[pairs["dimension"] == dimension]
    if catalogue is not None and split is not None:
        pairs = pairs[pairs["split"] == split]
    return pairs


def study_pairs(
    ledger: pd.DataFrame,
    labels: pd.DataFrame | Sequence[Label],
    catalogue: Catalogue,
    *,
    split: str | None = "calibration",
    rubric_versions: Mapping[str, str] | None = None,
    dimensions: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every (case, dimension) pair of a study, read exactly as the gate reads it.

    For each dimension (default: the gated ones) the ledger rows produced under the
    framing and constants in force and under the rubric version asked for
    (``rubric_versions``, default the rubric in force), joined with the labels at the final
    turn, one gated answer per case (:func:`gated_answers`), restricted to ``split`` (all
    splits when None). All
    strata and statuses are kept; :func:`gated_rows` and :func:`complete_rows` select what
    enters kappa. An unknown rubric version is a ``KeyError`` naming it.
    """
    asked = dict(rubric_versions or {})
    dims = list(dimensions or catalogue.constants.gated_dimensions)
    expected = expected_hashes(catalogue)
    bins = catalogue.constants.bins
    expected["rubric_hashes"] = {
        d: catalogue.rubric(d, asked.get(d)).content_hash(bins) for d in dims
    }
    ids = {c.id for c in catalogue.split(split)} if split is not None else None
    if ids is not None and len(ledger):
        ledger = ledger[ledger["case_id"].isin(ids)]
    stale = stale_requests(ledger, catalogue)
    if stale:
        ledger = ledger[~ledger["request_key"].isin(stale)]
    frames = []
    for dim in dims:
        rows = ledger[ledger["dimension"] == dim] if len(ledger) else ledger
        if len(rows):
            rows = rows[matching_rows(rows, dim, expected)]
        frames.append(dimension_pairs(rows, labels, catalogue, dim, split))
    return pd.concat(frames, ignore_index=True) if frames else join_pairs(ledger, labels)


def kappa_pairs(
    ledger: pd.DataFrame,
    labels: pd.DataFrame | Sequence[Label],
    catalogue: Catalogue,
    *,
    split: str | None = "calibration",
    rubric_versions: Mapping[str, str] | None = None,
    dimensions: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The pairs that enter kappa: :func:`study_pairs`, gated strata, complete rows."""
    pairs = study_pairs(
        ledger,
        labels,
        catalogue,
        split=split,
        rubric_versions=rubric_versions,
        dimensions=dimensions,
    )
    return complete_rows(gated_rows(pairs), catalogue.constants.bins).reset_index(drop=True)


def pairs(
    ledger: pd.DataFrame,
    catalogue: Catalogue,
    *,
    split: str | None = "calibration",
    dimension: str | Sequence[str] | None = None,
    labels: pd.DataFrame | Sequence[Label] | None = None,
    gated_only: bool = True,
    complete: bool = False,
    rubric_versions: Mapping[str, str] | None = None,
    judge_spec: str | None = None,
) -> pd.DataFrame:
    """The judge-versus-human pairs of a split, read with the filters the gate uses.

    ``ledger`` is the frame of :func:`evalkit.judge.load_ledger`; ``labels`` default to the
    catalogue's consensus labels (for the held-out split pass the sealed ones,
    :func:`evalkit.heldout.sealed_labels`). Rows come from :func:`study_pairs`: only ledger
    rows produced under the framing, constants and rubric in force (or ``rubric_versions``),
    the final turn, the gated answer per case and dimension, the cases of ``split`` (all
    splits when None). ``dimension`` picks one dimension or several (default: the gated
    ones). ``gated_only`` keeps the strata that enter kappa (diagnostic and canary cases
    are left out); ``complete`` keeps only rows with both a judge bin and a human label,
    which are then exactly the pairs of the gate's kappa.

    One row per case and dimension, sorted by dimension then case; columns
    (:data:`PAIR_COLUMNS`):

    - ``case_id``, ``dimension``, ``turn`` (the judged turn; missing for a labelled case
      the judge never scored);
    - ``judge``: the judge's bin, missing when its answer was not ``ok`` (or, in a broken
      ledger, not one of the frozen bins: the gate counts both as unusable);
    - ``human``: the human label's bin, missing for a scored case without a label;
    - ``status``: the judge answer's status (``ok``, ``unparseable``, ``refused``,
      ``error``), missing when never scored;
    - ``signal_present``, ``injection_attempt``, ``rationale``: the judge's other answers;
    - ``locale``, ``stratum``, ``split``, ``template_family``: the case's metadata.

    Every agreement function accepts the frame as it is:
    ``agreement_table(pairs(ledger, cat), cat.constants.bins)`` (rows with a missing bin
    are dropped jointly and counted), :func:`evalkit.gate.breakdown`, or
    ``cohens_kappa(p["judge"], p["human"], bins)``.

    One judge at a time, as the gate (ADR-0016): with several judges in the ledger name
    one with ``judge_spec``; otherwise, and for a ``judge_spec`` found in no row, a
    :class:`~evalkit.errors.GateInputError`. An unknown rubric version is a ``KeyError``.
    """
    judges = sorted(map(str, ledger["judge"].dropna().unique())) if "judge" in ledger else []
    if judge_spec is None and len(judges) > 1:
        raise GateInputError(
            f"the ledger holds answers from {len(judges)} judges ({', '.join(judges)}): "
            "name the one to read with judge_spec="
        )
    ledger = select_judge(ledger, judge_spec)[0]
    dims = [dimension] if isinstance(dimension, str) else dimension
    frame = study_pairs(
        ledger,
        catalogue.labels if labels is None else labels,
        catalogue,
        split=split,
        rubric_versions=rubric_versions,
        dimensions=dims,
    )
    bins = list(catalogue.constants.bins)
    frame.loc[~frame["judge"].isin(bins), "judge"] = None
    if gated_only:
        frame = gated_rows(frame)
    if complete:
        frame = complete_rows(frame, bins)
    return frame.reset_index(drop=True)
