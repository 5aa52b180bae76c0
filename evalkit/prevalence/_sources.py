"""Where the pool and the labelled set come from: one judge for both, or no estimate.

The correction of :func:`~evalkit.prevalence.corrected_prevalence` measures how *one*
judge errs on the labelled set and removes that error from *the same judge's* bins on the
pool. With the pool judged by another judge (or another model behind the same spec) the
"corrected" share corrects nothing and its interval is not valid (issue #30: it excluded
the humans' own share and was reported ``ok``).

Rubric and framing need no check here: the pool and the labelled set are both read with
:func:`evalkit.gate.pairs` under the same rubric versions, which keeps only the rows
produced under those rubrics and the framing in force.
"""

from __future__ import annotations

import pandas as pd

from evalkit.prevalence._frames import PrevalenceInputError

#: Ledger columns that name who answered: the judge spec and the model behind it.
IDENTITY = ("judge", "model")


def judges(ledger: pd.DataFrame) -> list[str]:
    """Who answered in ``ledger`` (a :func:`~evalkit.judge.load_ledger` frame): each
    distinct judge spec and model as ``"spec (model)"``, sorted; empty for a ledger
    with no answer."""
    if ledger.empty or not set(IDENTITY) <= set(ledger.columns):
        return []
    found = ledger[list(IDENTITY)].dropna(subset=["judge"]).drop_duplicates()
    return sorted(
        f"{j} ({m})" if isinstance(m, str) and m and m != j else str(j)
        for j, m in found.itertuples(index=False)
    )


def same_judge(
    pool: pd.DataFrame, labelled: pd.DataFrame, *, pool_name: str, labelled_name: str
) -> str:
    """The one judge (``"spec (model)"``) that scored both ``pool`` and ``labelled``.

    Both are :func:`~evalkit.judge.load_ledger` frames; ``pool_name`` and
    ``labelled_name`` name them in the error (their files). Raises
    :class:`PrevalenceInputError` (exit 2 in the CLI) when either holds no answer, more
    than one judge, or a judge the other does not.
    """
    found = {pool_name: judges(pool), labelled_name: judges(labelled)}
    for name, who in found.items():
        if not who:
            raise PrevalenceInputError(f"{name}: no judge answer in this ledger")
        if len(who) > 1:
            raise PrevalenceInputError(
                f"{name}: answers of {len(who)} judges ({', '.join(who)}); a prevalence "
                "reads one judge: give a ledger of that judge only"
            )
    (pool_judge,), (labelled_judge,) = found[pool_name], found[labelled_name]
    if pool_judge != labelled_judge:
        raise PrevalenceInputError(
            f"the pool {pool_name} was judged by {pool_judge} and the labelled set "
            f"{labelled_name} by {labelled_judge}: the correction learns one judge's errors "
            "on the labelled set and is valid only for that judge's bins on the pool; judge "
            "both with the same judge"
        )
    return pool_judge
