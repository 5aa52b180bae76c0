"""Label Studio "JSON" exports in the documented shape, built from evalkit's own task set.

Label Studio's export (https://labelstud.io/guide/export.html, "JSON"; task format at
https://labelstud.io/guide/task_format) is a list of tasks, each with its ``id``, the
``data`` it was imported with, and ``annotations``: one per annotator, ``completed_by``
the annotator's id, ``result`` a list of regions ``{"id", "from_name", "to_name",
"type": "choices", "value": {"choices": [...]}, "origin"}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Choose = Callable[[str, str], str | None]


def export(
    tasks: Sequence[Mapping[str, Any]],
    dimensions: Sequence[str],
    annotators: Mapping[int, Choose],
) -> list[dict[str, Any]]:
    """The export of ``tasks`` labelled by ``annotators`` (id → (case_id, dimension) → bin,
    or None to leave a dimension blank)."""
    out = []
    for n, task in enumerate(tasks, start=1):
        case_id = task["data"]["case_id"]
        annotations = []
        for k, (who, choose) in enumerate(annotators.items()):
            result = []
            for dim in dimensions:
                bin_ = choose(case_id, dim)
                if bin_ is None:
                    continue
                result.append(
                    {
                        "id": f"r{n}-{k}-{dim}",
                        "from_name": dim,
                        "to_name": "dialogue",
                        "type": "choices",
                        "origin": "manual",
                        "value": {"choices": [bin_]},
                    }
                )
            annotations.append(
                {
                    "id": 1000 * n + k,
                    "completed_by": who,
                    "result": result,
                    "was_cancelled": False,
                    "ground_truth": False,
                    "created_at": "2026-12-01T10:00:00.000000Z",
                    "updated_at": "2026-12-01T10:00:00.000000Z",
                    "lead_time": 4.2,
                    "task": n,
                }
            )
        out.append(
            {
                "id": n,
                "data": dict(task["data"]),
                "annotations": annotations,
                "predictions": [],
                "created_at": "2026-12-01T09:00:00.000000Z",
                "updated_at": "2026-12-01T10:00:00.000000Z",
                "project": 1,
            }
        )
    return out
