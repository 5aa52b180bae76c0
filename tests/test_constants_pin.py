"""The frozen constants and the judge framing are pinned by hash (ADR-0001, ADR-0003).

If this test fails you changed a frozen constant. That is allowed only as a recorded
decision: write an ADR in docs/adr/ saying what changed and why, then move the pin
below in the same commit.
"""

from __future__ import annotations

import hashlib

from tests.factory import SHIPPED

# Moved by: ADR-0028 and ADR-0029 (audit.two_sided_ceiling, mutation). Before: ADR-0025
# (rubrics in force: faithfulness v2). Before: ADR-0014
# (gate.min_pairs 40). Before: ADR-0010 (rubrics in force: self_harm v3,
# escalation v2) and ADR-0011
# (audit.shortcut_ceiling 0.40). Before: ADR-0003 (initial freeze).
CONSTANTS_SHA256 = "305ecb8a21e658a4019ef69c02bfbaeb19dd5f5ec3ce41bccd3fb89ab7b4a26a"
# Moved by: ADR-0003 (initial freeze).
FRAMING_SHA256 = "f632aef74c38365b384867f092f5fbf5ef1db9f5b6682b8562dfb269ad606226"


def _sha(name: str) -> str:
    return hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest()


def test_constants_are_pinned() -> None:
    assert _sha("constants.yaml") == CONSTANTS_SHA256, (
        "catalogues/constants.yaml changed: record the decision in an ADR and move the pin"
    )


def test_framing_is_pinned() -> None:
    assert _sha("framing.txt") == FRAMING_SHA256, (
        "catalogues/framing.txt changed: record the decision in an ADR and move the pin"
    )
