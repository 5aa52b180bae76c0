"""Construct tools: the rules of each construct, rubric versions side by side, mutants.

These tools answer "is the judge, the rubric or the corpus at fault?" (ADR-0006,
ADR-0024):

- :func:`rule_inventory`: per dimension, each rule with where it is stated (the guide,
  which rubric versions) and how many cases exercise it per split and locale.
- :func:`diff_rules`: the rules added, removed and reworded between two rubric versions,
  or between the guide and a version.
- :func:`mutate`: rubric mutation testing, each rule of the rubric in force removed in
  turn (ADR-0029): would the catalogue catch a missing rule?
- :func:`compare_versions` puts two rubric versions of one dimension side by side on the
  same cases and judge; :func:`same_call_view` shows the bins each dimension received in
  one call.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.construct._compare import compare_versions, rubric_version, same_call_view
    from evalkit.construct._mutate import Mutant, MutationResult, mutants, mutate
    from evalkit.construct._rules import RuleDiff, diff_rules, rule_inventory
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_compare": ["compare_versions", "rubric_version", "same_call_view"],
            "_mutate": ["Mutant", "MutationResult", "mutants", "mutate"],
            "_rules": ["RuleDiff", "diff_rules", "rule_inventory"],
        },
    )

__all__ = [
    "Mutant",
    "MutationResult",
    "RuleDiff",
    "compare_versions",
    "diff_rules",
    "mutants",
    "mutate",
    "rubric_version",
    "rule_inventory",
    "same_call_view",
]
