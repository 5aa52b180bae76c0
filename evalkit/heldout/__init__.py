"""The held-out protocol: blind template → owner fills it → seal → judge → agreement.

See ADR-0008. The tool refuses held-out agreement from unsealed or changed labels, from
a held-out set that overlaps calibration, or from a sheet with blank slots.
"""

from evalkit.heldout._seal import (
    REGISTRY,
    Seal,
    SealStatus,
    assert_disjoint,
    assert_sealed,
    assert_sealed_before,
    current_seal,
    read_registry,
    seal_labels,
    sealed_labels,
    verify_seals,
)
from evalkit.heldout._template import (
    NOT_APPLICABLE,
    conversation_text,
    read_filled,
    template_csv,
    template_rows,
    write_template,
)

__all__ = [
    "NOT_APPLICABLE",
    "REGISTRY",
    "Seal",
    "SealStatus",
    "assert_disjoint",
    "assert_sealed",
    "assert_sealed_before",
    "conversation_text",
    "current_seal",
    "read_filled",
    "read_registry",
    "seal_labels",
    "sealed_labels",
    "template_csv",
    "template_rows",
    "verify_seals",
    "write_template",
]
