"""Agreement per stratum and per locale, flagged descriptive where cells are small."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evalkit.agreement import agreement_table
from evalkit.catalogue import FrozenConstants


def breakdown(
    pairs: pd.DataFrame,
    constants: FrozenConstants,
    by: str | Sequence[str] = "locale",
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row of agreement statistics per dimension and group of ``by``.

    ``pairs`` is the frame of :func:`join_pairs`; rows without both a judge and a human bin
    are counted in ``n_missing``. Intervals are the Wald interval and a bootstrap that
    resamples whole template families. A cell with fewer than ``constants.gate.min_cell_n``
    complete pairs is marked ``descriptive``: its numbers describe, they never gate.
    """
    keys = [by] if isinstance(by, str) else list(by)
    frame = pairs.copy()
    frame["_cell"] = frame[["dimension", *keys]].astype(str).agg(" | ".join, axis=1)
    table = agreement_table(
        frame,
        list(constants.bins),
        dimension_col="_cell",
        cluster_col="template_family" if frame["template_family"].notna().all() else None,
        n_resamples=n_resamples,
        seed=seed,
        threshold=constants.gate.threshold,
    )
    parts = table["dimension"].str.split(" | ", regex=False, expand=True)
    parts.columns = ["dimension", *keys]
    out = pd.concat([parts, table.drop(columns=["dimension"])], axis=1)
    out.insert(len(keys) + 1, "descriptive", out["n"].fillna(0) < constants.gate.min_cell_n)
    return out.sort_values(["dimension", *keys], ignore_index=True)
