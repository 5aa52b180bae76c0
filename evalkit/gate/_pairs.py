"""Join judge answers with human labels: the frame every agreement computation reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evalkit.catalogue import Catalogue, Label

#: Columns of :func:`join_pairs`.
PAIR_COLUMNS = (
    "case_id",
    "dimension",
    "turn",
    "judge_bin",
    "human_bin",
    "status",
    "signal_present",
    "locale",
    "stratum",
    "split",
    "template_family",
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
    without a label (``human_bin`` missing) and a labelled case the judge never scored
    (``status`` missing) both stay visible. ``judge_bin`` is missing whenever the judge
    answer was not ``ok``. Case metadata (locale, stratum, split, template family) comes
    from ``catalogue`` when given, otherwise stays missing. When a ledger holds more than
    one final-turn answer for a case and dimension (the same turn judged in different
    call groupings, say by the onset study and by a calibration run), the latest by
    ``created_at`` is used; :func:`repeated_answers` counts such cases.
    """
    lab = labels_frame(labels)[["case_id", "dimension", "bin"]].rename(columns={"bin": "human_bin"})
    cols = ["case_id", "dimension", "turn", "bin", "status"]
    if "signal_present" in ledger.columns:
        cols.append("signal_present")
    final = final_turn_rows(ledger)
    if "created_at" in final.columns:
        final = final.sort_values("created_at", kind="stable")
    judged = final[cols].rename(columns={"bin": "judge_bin"})
    judged = judged.drop_duplicates(["case_id", "dimension"], keep="last")
    pairs = judged.merge(lab, on=["case_id", "dimension"], how="outer")
    pairs.loc[pairs["status"] != "ok", "judge_bin"] = None
    if "signal_present" not in pairs.columns:
        pairs["signal_present"] = None
    if catalogue is not None:
        meta = catalogue.cases_frame()[["case_id", "locale", "stratum", "split", "template_family"]]
        pairs = pairs.merge(meta, on="case_id", how="left")
    for col in PAIR_COLUMNS:
        if col not in pairs.columns:
            pairs[col] = None
    return pairs[list(PAIR_COLUMNS)].sort_values(["dimension", "case_id"], ignore_index=True)


def repeated_answers(ledger: pd.DataFrame) -> pd.Series:
    """Per dimension, how many cases have more than one final-turn answer in ``ledger``."""
    final = final_turn_rows(ledger)
    if final.empty:
        return pd.Series(dtype="int64")
    counts = final.groupby(["dimension", "case_id"]).size()
    return (counts > 1).groupby(level="dimension").sum().astype("int64")
