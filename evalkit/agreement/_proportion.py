"""The Wilson score interval of a share (agreement on a handful of cases).

For ``k`` successes in ``n`` trials and ``z`` the normal quantile of the level:
``centre = (p + z²/2n) / (1 + z²/n)``, ``half = z √(p(1-p)/n + z²/4n²) / (1 + z²/n)``
(Wilson 1927; Newcombe 1998, method 3). Unlike the Wald interval it stays inside [0, 1]
and is not zero-width at 0 or n successes: 10 of 10 gives [0.722, 1] at 95%.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """(low, high) of the Wilson interval of ``k / n``; ``(None, None)`` when ``n`` is 0.

    ``ValueError`` for ``k`` outside [0, n] or ``level`` outside (0, 1).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None, None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
