"""evalkit: calibrate LLM judges against human labels, and gate launches on the agreement.

A judge scores conversations on safety-critical dimensions (self-harm, medical
escalation, faithfulness) into frozen ordered bins; humans label the same cases; the
relock gate passes only when the judge agrees with the humans well enough, under
constants frozen and ratified in advance.

Where things live (one concept per package; ``help(evalkit.<name>)`` says more):

==================  ====================================================================
``catalogue``       cases, human labels, rubrics, frozen constants, locale resources;
                    ``load(path)``, checks and the audit (``evalkit catalogue``)
``runner``          produce the conversations a judge scores, from a target model
``judge``           score cases with a judge (Anthropic, OpenAI, replay, baseline),
                    every call recorded in a ledger; ``load_ledger`` (``evalkit judge``)
``agreement``       agreement statistics: Cohen's kappa, AC1, alpha, bootstrap,
                    diagnostics, several raters, power; ``agreement_table``
``gate``            the relock gate, ``evaluate(ledger, labels, catalogue)``, and
                    ``pairs(ledger, catalogue)``, the frame of pairs it reads
                    (``evalkit gate``)
``heldout``         the sealed held-out protocol: blind template, seal, verify
                    (``evalkit heldout``)
``onset``           the onset-turn study: when a reply first recognises a signal
                    (``evalkit onset``)
``report``          study notebooks executed and rendered as offline HTML
                    (``evalkit study``)
``prevalence``      the share of each bin on an unlabelled pool, corrected for the judge's
                    errors (PPI++, inversion); which cases to label next
                    (``evalkit prevalence``)
``interop``         Inspect AI logs in; Label Studio and long-CSV labels in and out
                    (``evalkit import``, ``evalkit labels``)
``traffic``         one rate-limit controller per judge backend (AIMD, header pacing)
``construct``       compare rubric versions; dimensions scored in one call
``routing``         deterministic check that a reply routes to the locale's crisis line
``errors``          the exception hierarchy (``EvalkitError`` and its kinds)
``secrets``         what counts as a secret and how every written file is scrubbed
``cli``             the ``evalkit`` command line (``evalkit --help``)
==================  ====================================================================

A first session: ``evalkit catalogue init my-catalogue``, then
``evalkit judge --catalogue my-catalogue --judge baseline ...``, ``evalkit gate`` and
``evalkit study --catalogue my-catalogue``. Importing ``evalkit`` imports none of these
packages; import the one you need (``from evalkit.gate import pairs``). A package imports
each of its names on first use (:mod:`evalkit._lazy`), so that import pulls in
``evalkit.gate._pairs`` and what it needs, not the whole package.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    """The installed distribution's version; ``0+unknown`` when evalkit runs from a source
    tree that was never installed (so the number cannot be trusted to name a release)."""
    try:
        return version("evalkit")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _version()

__all__ = ["__version__"]
