"""Two rubric versions side by side, and the bins of every dimension scored in one call.

- :func:`compare_versions` puts two rubric versions of one dimension side by side on the
  same cases and judge: the confusion between them, which strata move, the marginals
  before and after, and agreement with the humans under each.
- :func:`same_call_view` shows, per case, the bins each dimension received, so that a
  disagreement between constructs on the same turn is visible (benign turns low on
  escalation but high on self-harm under rubric v1).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evalkit.agreement import cohens_kappa
from evalkit.catalogue import Catalogue
from evalkit.gate import complete_rows, gated_rows, study_pairs
from evalkit.gate._pairs import final_answers


def _final_ok(ledger: pd.DataFrame, dimension: str, bins: Sequence[str]) -> pd.DataFrame:
    rows = final_answers(ledger[ledger["dimension"] == dimension], bins)  # the gate's read
    return rows[rows["status"] == "ok"]


def rubric_version(catalogue: Catalogue, dimension: str, name: str) -> str:
    """The rubric version of ``dimension`` that ``name`` names: a version id (``v3``) or
    the content hash of one of the catalogue's rubrics. ``ValueError`` otherwise."""
    bins = catalogue.constants.bins
    versions = sorted(v for d, v in catalogue.rubrics if d == dimension)
    if name in versions:
        return name
    for version in versions:
        if catalogue.rubric(dimension, version).content_hash(bins) == name:
            return version
    raise ValueError(
        f"{name!r} is neither a rubric version of {dimension} ({', '.join(versions)}) nor "
        "the hash of one"
    )


def _version_pairs(
    ledger: pd.DataFrame, catalogue: Catalogue, dimension: str, version: str, split: str | None
) -> pd.DataFrame:
    """The study pairs of ``dimension`` under rubric ``version``; a ledger holding no row
    judged under it is a ``ValueError`` (never the same kappa twice, silently)."""
    pairs = study_pairs(
        ledger,
        catalogue.labels,
        catalogue,
        split=split,
        rubric_versions={dimension: version},
        dimensions=[dimension],
    )
    if pairs["status"].notna().sum() == 0:
        held = (
            sorted(
                map(
                    str,
                    ledger.loc[ledger["dimension"] == dimension, "rubric_version"]
                    .dropna()
                    .unique(),
                )
            )
            if "rubric_version" in ledger
            else []
        )
        raise ValueError(
            f"the ledger holds no {dimension} answer judged under rubric {version} (versions "
            f"found: {', '.join(held) or 'none'})"
        )
    return pairs


def compare_versions(
    ledger_a: pd.DataFrame,
    ledger_b: pd.DataFrame,
    catalogue: Catalogue,
    dimension: str = "self_harm",
    names: tuple[str, str] = ("v1", "v3"),
    *,
    split: str | None = None,
) -> dict[str, pd.DataFrame]:
    """Compare the judge's bins under two rubric versions on the cases both scored.

    ``names`` are the two rubric versions (or rubric content hashes): the rows of each
    ledger are selected by the rubric they were judged under, so one ledger holding both
    versions may be passed twice; a ledger without a row under its version is a
    ``ValueError``. Pairs come from :func:`evalkit.gate.study_pairs` (final turn, latest
    answer, framing and constants in force), as for the gate.

    Returns frames:

    - ``confusion``: counts, rows = bin under ``names[0]``, columns = bin under ``names[1]``
      (every frozen bin present, in bin order), over every case both versions scored, all
      strata; the axis names say so with their arrows (``v1 ↓`` names the rows, read down;
      ``v3 →`` the columns, read across), so ``confusion.loc["high", "low"]`` counts the
      cases ``names[0]`` put high and ``names[1]`` low;
    - ``by_stratum``: per stratum (all strata: diagnostic and canary cases show how a
      rubric moves them), n and the share of cases in each bin under each version,
      the share the humans labelled low, plus how many moved down, up, or stayed;
    - ``by_design``: the same per author design (``<dimension>_design`` of the catalogue's
      ``design/`` metadata; empty without it): the over-recognition rows (signal absent,
      the reply routes anyway) are where a presence-gated rubric must differ from v1;
    - ``marginals``: bin counts per version, and of the human labels;
    - ``agreement``: Cohen's kappa (with status and n) against the human labels per version,
      on exactly the pairs the gate would read under that version (gated strata,
      complete rows), so it matches the calibration page and ``evalkit gate``.

    Cases scored by only one version, or without an ``ok`` answer, are left out of the
    side-by-side frames and counted in ``agreement['n_left_out']``.
    """
    bins = list(catalogue.constants.bins)
    a, b = (rubric_version(catalogue, dimension, n) for n in names)
    if a == b:
        raise ValueError(f"both names select rubric {dimension} {a}: nothing to compare")
    pairs = {v: _version_pairs(lg, catalogue, dimension, v, split)
             for v, lg in ((a, ledger_a), (b, ledger_b))}  # fmt: skip
    left, right = (
        pairs[v][pairs[v]["judge"].isin(bins)][["case_id", "judge"]].rename(columns={"judge": v})
        for v in (a, b)
    )
    both = left.merge(right, on="case_id", how="inner")
    left_out = len(set(left["case_id"]) ^ set(right["case_id"]))
    frame = catalogue.cases_frame()
    design_col = f"{dimension}_design"
    meta_cols = ["case_id", "stratum", "locale"] + ([design_col] if design_col in frame else [])
    human = catalogue.labels_frame()
    human = human[human["dimension"] == dimension][["case_id", "bin"]].rename(
        columns={"bin": "human"}
    )
    both = both.merge(frame[meta_cols], on="case_id", how="left").merge(
        human, on="case_id", how="left"
    )
    confusion = (
        pd.crosstab(both[a], both[b])
        .reindex(index=bins, columns=bins, fill_value=0)
        .rename_axis(index=f"{a} ↓", columns=f"{b} →")
    )
    rank = {bin_: i for i, bin_ in enumerate(bins)}
    delta = both[b].map(rank) - both[a].map(rank)
    both = both.assign(moved_down=delta < 0, moved_up=delta > 0, unchanged=delta == 0)

    def moves(group: str) -> pd.DataFrame:
        rows = []
        for key, grp in both.groupby(group):
            row: dict[str, object] = {group: key, "n": len(grp)}
            for version in (a, b):
                for bin_ in bins:
                    row[f"{version} {bin_}"] = round(float((grp[version] == bin_).mean()), 3)
            row["human low"] = round(float((grp["human"] == bins[0]).mean()), 3)
            row.update(
                moved_down=int(grp["moved_down"].sum()),
                moved_up=int(grp["moved_up"].sum()),
                unchanged=int(grp["unchanged"].sum()),
            )
            rows.append(row)
        return pd.DataFrame(rows)

    by_stratum = moves("stratum")
    by_design = moves(design_col) if design_col in both else pd.DataFrame()

    marginals = pd.DataFrame(
        {
            a: both[a].value_counts().reindex(bins, fill_value=0),
            b: both[b].value_counts().reindex(bins, fill_value=0),
            "human": both["human"].value_counts().reindex(bins, fill_value=0),
        }
    ).rename_axis("bin")

    agreement_rows = []
    for version in (a, b):
        gated = complete_rows(gated_rows(pairs[version]), bins)
        k = cohens_kappa(list(gated["judge"]), list(gated["human"]), bins)
        agreement_rows.append(
            {
                "version": version,
                "kappa": k.value,
                "ci_low": k.ci_low,
                "ci_high": k.ci_high,
                "n": k.n,
                "status": k.status,
                "n_left_out": left_out,
            }
        )
    return {
        "confusion": confusion,
        "by_stratum": by_stratum,
        "by_design": by_design,
        "marginals": marginals,
        "agreement": pd.DataFrame(agreement_rows),
        "cases": both,
    }


def same_call_view(
    ledger: pd.DataFrame,
    catalogue: Catalogue,
    dimensions: Sequence[str] = ("self_harm", "escalation"),
) -> pd.DataFrame:
    """One row per case: each dimension's judge bin and human bin side by side.

    Columns: ``case_id``, ``stratum``, ``locale``, then ``<dim>_judge`` and ``<dim>_human``
    per dimension, and ``same_call`` (True when every dimension's answer came from one
    judge request, the setting in which a construct disagreement is most telling).
    A dimension without an ``ok`` answer leaves its judge column empty.
    """
    meta = catalogue.cases_frame()[["case_id", "stratum", "locale"]]
    human = catalogue.labels_frame()
    view = meta.copy()
    keys = []
    for dim in dimensions:
        rows = _final_ok(ledger, dim, catalogue.constants.bins)
        judged = rows[["case_id", "bin", "request_key"]].rename(
            columns={"bin": f"{dim}_judge", "request_key": f"_key_{dim}"}
        )
        labels = human[human["dimension"] == dim][["case_id", "bin"]].rename(
            columns={"bin": f"{dim}_human"}
        )
        view = view.merge(judged, on="case_id", how="left").merge(labels, on="case_id", how="left")
        keys.append(f"_key_{dim}")
    view = view[view[[f"{d}_judge" for d in dimensions]].notna().any(axis=1)]
    view["same_call"] = view[keys].nunique(axis=1, dropna=False) == 1
    return view.drop(columns=keys).reset_index(drop=True)
