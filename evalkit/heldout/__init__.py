"""The held-out protocol: blind template → owner fills it → seal → judge → agreement.

See ADR-0008 and ADR-0015. Seals form an append-only hash chain anchored in git; each
covers the filled sheet, the blind template and the held-out case files. The tool refuses
held-out judging and agreement from unsealed or changed labels, from any broken seal in
the chain, from answers judged under another seal or dated before theirs, from a
held-out set that overlaps calibration, and from a sheet with blank slots.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.heldout._chain import GENESIS, Seal
    from evalkit.heldout._registry import REGISTRY, TEMPLATE, read_registry
    from evalkit.heldout._rows import assert_sealed_before
    from evalkit.heldout._seal import seal_labels
    from evalkit.heldout._template import (
        NOT_APPLICABLE,
        conversation_text,
        read_filled,
        template_csv,
        template_rows,
        write_template,
    )
    from evalkit.heldout._verify import (
        SealStatus,
        anchor_note,
        assert_chain,
        assert_disjoint,
        assert_sealed,
        current_seal,
        sealed_labels,
        verify_seals,
    )
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_chain": ["GENESIS", "Seal"],
            "_registry": ["REGISTRY", "TEMPLATE", "read_registry"],
            "_rows": ["assert_sealed_before"],
            "_seal": ["seal_labels"],
            "_template": [
                "NOT_APPLICABLE",
                "conversation_text",
                "read_filled",
                "template_csv",
                "template_rows",
                "write_template",
            ],
            "_verify": [
                "SealStatus",
                "anchor_note",
                "assert_chain",
                "assert_disjoint",
                "assert_sealed",
                "current_seal",
                "sealed_labels",
                "verify_seals",
            ],
        },
    )

__all__ = [
    "GENESIS",
    "NOT_APPLICABLE",
    "REGISTRY",
    "TEMPLATE",
    "Seal",
    "SealStatus",
    "anchor_note",
    "assert_chain",
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
