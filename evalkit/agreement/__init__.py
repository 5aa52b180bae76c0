"""Agreement statistics for judge-versus-human labels.

Two raters (judge ``a`` and human ``b``, equal-length sequences of category values, None or
NaN missing) over a frozen, ordered category list: :func:`cohens_kappa`,
:func:`gwet_ac1`, :func:`brennan_prediger`, :func:`bootstrap_ci`, :func:`diagnose`.
More raters: :func:`krippendorff_alpha` (raters × units) and :func:`fleiss_kappa`
(units × raters); :func:`multi_rater` (raw ratings, any number of raters, missing cells) and
:func:`multi_rater_counts` (units × categories counts) give irrCAC's six coefficients
(percent agreement, Fleiss, Conger, Gwet AC1/AC2, Brennan–Prediger, alpha) with SEs.
Several labelers and a judge: :func:`human_ceiling` (each labeler
against the consensus of the others, the judge on the same scale), :func:`pairwise_kappa`,
:func:`judge_vs_humans` (paired judge-minus-human kappa, non-inferiority) and
:func:`alt_test` (the alternative-annotator test of Calderon, Reichart & Dror 2025).
Planning: :func:`sample_size`, :func:`gate_power`.  Reporting: :func:`agreement_table`.

Results are frozen records with ``.to_dict()``; a number that does not exist is ``None``
and ``.status`` says why (see ``STATUSES``).  Bad input raises ``ValueError``.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.agreement._ac1 import gwet_ac1
    from evalkit.agreement._alt_test import AltTestResult, alt_test
    from evalkit.agreement._bootstrap import bootstrap_ci, bootstrap_interval
    from evalkit.agreement._bp import brennan_prediger
    from evalkit.agreement._ceiling import (
        JudgeVsHumansResult,
        human_ceiling,
        judge_vs_humans,
        pairwise_kappa,
    )
    from evalkit.agreement._diagnose import Diagnosis, diagnose
    from evalkit.agreement._fleiss import fleiss_kappa
    from evalkit.agreement._kappa import cohens_kappa
    from evalkit.agreement._krippendorff import krippendorff_alpha
    from evalkit.agreement._multi_rater import multi_rater, multi_rater_counts
    from evalkit.agreement._power import gate_power, sample_size
    from evalkit.agreement._proportion import wilson_interval
    from evalkit.agreement._results import (
        STATUSES,
        AgreementResult,
        AlphaResult,
        BootstrapResult,
        FleissResult,
        GatePowerResult,
        HomogeneityTest,
    )
    from evalkit.agreement._table import agreement_table
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_ac1": ["gwet_ac1"],
            "_alt_test": ["AltTestResult", "alt_test"],
            "_bootstrap": ["bootstrap_ci", "bootstrap_interval"],
            "_bp": ["brennan_prediger"],
            "_ceiling": [
                "JudgeVsHumansResult",
                "human_ceiling",
                "judge_vs_humans",
                "pairwise_kappa",
            ],
            "_diagnose": ["Diagnosis", "diagnose"],
            "_fleiss": ["fleiss_kappa"],
            "_kappa": ["cohens_kappa"],
            "_krippendorff": ["krippendorff_alpha"],
            "_multi_rater": ["multi_rater", "multi_rater_counts"],
            "_power": ["gate_power", "sample_size"],
            "_proportion": ["wilson_interval"],
            "_results": [
                "STATUSES",
                "AgreementResult",
                "AlphaResult",
                "BootstrapResult",
                "FleissResult",
                "GatePowerResult",
                "HomogeneityTest",
            ],
            "_table": ["agreement_table"],
        },
    )

__all__ = [
    "STATUSES",
    "AgreementResult",
    "AlphaResult",
    "AltTestResult",
    "BootstrapResult",
    "Diagnosis",
    "FleissResult",
    "GatePowerResult",
    "HomogeneityTest",
    "JudgeVsHumansResult",
    "agreement_table",
    "alt_test",
    "bootstrap_ci",
    "bootstrap_interval",
    "brennan_prediger",
    "cohens_kappa",
    "diagnose",
    "fleiss_kappa",
    "gate_power",
    "gwet_ac1",
    "human_ceiling",
    "judge_vs_humans",
    "krippendorff_alpha",
    "multi_rater",
    "multi_rater_counts",
    "pairwise_kappa",
    "sample_size",
    "wilson_interval",
]
