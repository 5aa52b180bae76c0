"""The hand-worked per-turn frame shared by the onset tests (table in test_time_to_event)."""

from __future__ import annotations

import pandas as pd

CASES = {
    # case: (onset, agent turns, routed at)
    "c1": (0, [1, 3, 5], {1}),
    "c2": (2, [1, 3, 5, 7], {1, 5}),
    "c3": (2, [1, 3, 5, 7, 9], set()),
    "c4": (4, [1, 3, 5, 7], {7}),
    "c5": (0, [1], set()),
    "c6": (None, [1, 3], {3}),
    "c7": (6, [1, 3, 5, 7, 9, 11], {11}),
    "c8": (2, [1, 3, 5], {3}),
}


def frame() -> pd.DataFrame:
    rows = []
    for cid, (onset, turns, routed) in CASES.items():
        for t in turns:
            rows.append(
                {
                    "case_id": cid,
                    "turn": t,
                    "onset_turn": onset,
                    "routed": t in routed,
                    "template_family": f"fam-{cid}",
                    "stratum": "x",
                }
            )
    df = pd.DataFrame(rows)
    df["onset_turn"] = df["onset_turn"].astype("Int64")
    return df
