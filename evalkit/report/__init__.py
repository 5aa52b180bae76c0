"""Study notebooks executed by papermill and rendered to offline HTML reports, and the
displays a researcher's notebook uses.

``evalkit study`` executes the study notebooks of ``notebooks/`` and writes ``reports/``.
The notebooks import this package as ``rp``; what they use is its public surface:

- **Working directory**: :func:`work_from_project_root`, the first call of a notebook
  opened in ``workspace/`` or ``notebooks/`` (relative paths are read from the root).
- **Exploration** (ADR-0017): :func:`exploration` (is a run gate evidence, and if not,
  why) and :func:`gate_view` (the catalogue as the gate reads a rubric variant; for a
  variant's verdict, ``evalkit.gate.evaluate(..., rubric_versions=...)`` is shorter).
- **Frames** (pandas, documented columns): :func:`agreement_frame`,
  :func:`group_agreement`, :func:`disagreements`, :func:`marginals`,
  :func:`dimension_diagnosis`, :func:`paradox_summary`, :func:`per_bin_diagnostics`,
  :func:`recall_frame`, :func:`advice_frame`, :func:`apart_frame`,
  :func:`verdict_overview`, :func:`flags_text`, :func:`error_structure`,
  :func:`ceiling_frame`, :func:`reference_bins`, :func:`prevalence_study`,
  :func:`prevalence_sets`, :func:`heldout_status`, :func:`blind_preview`,
  :func:`construct_examples`, :func:`same_call_summary`, :func:`split_composition`,
  :func:`version_movement`.
- **Charts** (offline Vega-Lite with an SVG fallback, ``docs/notebooks.md``):
  :func:`chart`, :func:`confusion_heatmap`, :func:`marginals_chart`,
  :func:`group_kappa_chart`, :func:`power_chart`, :func:`stacked_share_chart`,
  :func:`ceiling_chart`, :func:`shares_chart`, :func:`mutation_chart`,
  :func:`rule_cases_chart`; :func:`figure` embeds a matplotlib figure.
- **Panels and tables** (escaped HTML with their own styles): :func:`header`,
  :func:`verdict_panel`, :func:`overall_verdict`, :func:`verdict_overview_table`,
  :func:`agreement_display`, :func:`group_table`, :func:`marginals_table`,
  :func:`quantity_table`, :func:`apart_table`, :func:`transcripts`, :func:`rubric_card`,
  :func:`adr_list`, :func:`construct_caveat`, :func:`human_evidence_panel`,
  :func:`labelers_panel`, :func:`audit_panel`, :func:`rules_panel`,
  :func:`error_structure_panel`, :func:`power_panel` (:class:`PowerPanel`),
  :func:`plan_table`, :func:`shares_table`, :func:`widths_table`.
- **HTML building blocks**: :class:`Html`, :func:`heading`, :func:`paragraph`,
  :func:`bullets`, :func:`callout`, :func:`code`, :func:`table`, :func:`key_values`,
  :func:`row`, :func:`section`, :func:`esc`, and the formats :func:`interval`,
  :func:`pct`, :func:`readable`, :func:`dimension_name`.
- **Study headlines** (the index page's line per study): :func:`publish_headline`,
  :func:`gate_headline`, :func:`construct_headline`, :func:`onset_headline`,
  :func:`prevalence_headline`, :func:`mutation_headline`, :func:`refused_headline`.
- **Rendering**: :func:`render_notebook`, an executed notebook as an offline page.

The machinery behind ``evalkit study`` (``run_studies`` and ``STUDIES`` in
:mod:`._run`, execution, secret scans, ADR pages, the index) is private: import it from
its module. The names that were public before are still found here, with a
``DeprecationWarning`` naming their module.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.report._charts import (
        chart,
        confusion_heatmap,
        figure,
        group_kappa_chart,
        marginals_chart,
        power_chart,
        stacked_share_chart,
    )
    from evalkit.report._departures import error_structure, error_structure_panel
    from evalkit.report._exploration import exploration, gate_view
    from evalkit.report._frames import (
        advice_frame,
        agreement_frame,
        apart_frame,
        dimension_diagnosis,
        disagreements,
        flags_text,
        group_agreement,
        marginals,
        paradox_summary,
        per_bin_diagnostics,
        recall_frame,
        verdict_overview,
    )
    from evalkit.report._html import (
        Html,
        bullets,
        callout,
        code,
        esc,
        heading,
        interval,
        key_values,
        paragraph,
        pct,
        readable,
        row,
        section,
        table,
    )
    from evalkit.report._labelers import (
        audit_panel,
        ceiling_chart,
        ceiling_frame,
        human_evidence_panel,
        labelers_panel,
        reference_bins,
    )
    from evalkit.report._panels import (
        adr_list,
        agreement_display,
        apart_table,
        construct_caveat,
        dimension_name,
        group_table,
        header,
        marginals_table,
        quantity_table,
        rubric_card,
        transcripts,
    )
    from evalkit.report._power import PowerPanel, power_panel
    from evalkit.report._prevalence import (
        plan_table,
        prevalence_headline,
        prevalence_sets,
        prevalence_study,
        shares_chart,
        shares_table,
        widths_table,
    )
    from evalkit.report._protocol_frames import (
        blind_preview,
        construct_examples,
        heldout_status,
        same_call_summary,
        split_composition,
        version_movement,
    )
    from evalkit.report._render import render_notebook
    from evalkit.report._rules import (
        mutation_chart,
        mutation_headline,
        rule_cases_chart,
        rules_panel,
    )
    from evalkit.report._summary import (
        construct_headline,
        gate_headline,
        onset_headline,
        publish_headline,
        refused_headline,
    )
    from evalkit.report._verdicts import overall_verdict, verdict_overview_table, verdict_panel
    from evalkit.report._workdir import work_from_project_root
else:  # imported on first use, so that importing the package stays light
    import importlib
    import warnings
    from typing import Any

    _getattr, __dir__ = lazy_exports(
        __name__,
        {
            "_charts": [
                "chart",
                "confusion_heatmap",
                "figure",
                "group_kappa_chart",
                "marginals_chart",
                "power_chart",
                "stacked_share_chart",
            ],
            "_departures": ["error_structure", "error_structure_panel"],
            "_exploration": ["exploration", "gate_view"],
            "_frames": [
                "advice_frame",
                "agreement_frame",
                "apart_frame",
                "dimension_diagnosis",
                "disagreements",
                "flags_text",
                "group_agreement",
                "marginals",
                "paradox_summary",
                "per_bin_diagnostics",
                "recall_frame",
                "verdict_overview",
            ],
            "_html": [
                "Html",
                "bullets",
                "callout",
                "code",
                "esc",
                "heading",
                "interval",
                "key_values",
                "paragraph",
                "pct",
                "readable",
                "row",
                "section",
                "table",
            ],
            "_labelers": [
                "audit_panel",
                "ceiling_chart",
                "ceiling_frame",
                "human_evidence_panel",
                "labelers_panel",
                "reference_bins",
            ],
            "_panels": [
                "adr_list",
                "agreement_display",
                "apart_table",
                "construct_caveat",
                "dimension_name",
                "group_table",
                "header",
                "marginals_table",
                "quantity_table",
                "rubric_card",
                "transcripts",
            ],
            "_verdicts": ["overall_verdict", "verdict_overview_table", "verdict_panel"],
            "_power": ["PowerPanel", "power_panel"],
            "_prevalence": [
                "plan_table",
                "prevalence_headline",
                "prevalence_sets",
                "prevalence_study",
                "shares_chart",
                "shares_table",
                "widths_table",
            ],
            "_protocol_frames": [
                "blind_preview",
                "construct_examples",
                "heldout_status",
                "same_call_summary",
                "split_composition",
                "version_movement",
            ],
            "_render": ["render_notebook"],
            "_rules": ["mutation_chart", "mutation_headline", "rule_cases_chart", "rules_panel"],
            "_summary": [
                "construct_headline",
                "gate_headline",
                "onset_headline",
                "publish_headline",
                "refused_headline",
            ],
            "_workdir": ["work_from_project_root"],
        },
    )

    #: Names public before #28, now private: still resolved, with a warning naming the module.
    _FORMER = {
        name: module
        for module, names in {
            "_adr": ["AdrPage", "markdown_to_html", "render_adrs"],
            "_charts": ["Chart"],
            "_departures": ["ErrorStructure", "cells_table", "direction_table", "length_table"],
            "_execute": ["Execution", "execute_study", "read_source"],
            "_exploration": [
                "EXPLORATORY",
                "Exploration",
                "exploration_banner",
                "threshold_reading",
            ],
            "_frames": ["adr_href", "reasons_frame"],
            "_html": ["badge", "fmt", "join", "link", "strong", "transcript"],
            "_panels": ["judge_note"],
            "_prevalence": ["PrevalenceStudy", "labelled_split", "shares_frame"],
            "_protocol_frames": ["HeldoutStatus", "long_counts"],
            "_provenance": [
                "JUDGE_COLUMNS",
                "answering_judges",
                "judges_in_ledger",
                "judges_table",
                "ledger_frame",
            ],
            "_render": ["OfflineError", "remote_references", "vega_bundle"],
            "_rules": ["item_difficulty", "labeler_rule_agreement", "rule_disagreements"],
            "_run": ["STUDIES", "RunSummary", "Study", "StudyResult", "run_studies", "write_index"],
            "_secrets": ["SecretLeakError", "check_parameters", "scan_files", "scan_text"],
            "_summary": ["HEADLINE_MIME", "Headline", "read_headline"],
        }.items()
        for name in names
    }

    def __getattr__(name: str) -> Any:
        module = _FORMER.get(name)
        if module is None:
            return _getattr(name)
        warnings.warn(
            f"evalkit.report.{name} is private: import it from evalkit.report.{module}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "Html",
    "PowerPanel",
    "adr_list",
    "advice_frame",
    "agreement_display",
    "agreement_frame",
    "apart_frame",
    "apart_table",
    "audit_panel",
    "blind_preview",
    "bullets",
    "callout",
    "ceiling_chart",
    "ceiling_frame",
    "chart",
    "code",
    "confusion_heatmap",
    "construct_caveat",
    "construct_examples",
    "construct_headline",
    "dimension_diagnosis",
    "dimension_name",
    "disagreements",
    "error_structure",
    "error_structure_panel",
    "esc",
    "exploration",
    "figure",
    "flags_text",
    "gate_headline",
    "gate_view",
    "group_agreement",
    "group_kappa_chart",
    "group_table",
    "header",
    "heading",
    "heldout_status",
    "human_evidence_panel",
    "interval",
    "key_values",
    "labelers_panel",
    "marginals",
    "marginals_chart",
    "marginals_table",
    "mutation_chart",
    "mutation_headline",
    "onset_headline",
    "overall_verdict",
    "paradox_summary",
    "paragraph",
    "pct",
    "per_bin_diagnostics",
    "plan_table",
    "power_chart",
    "power_panel",
    "prevalence_headline",
    "prevalence_sets",
    "prevalence_study",
    "publish_headline",
    "quantity_table",
    "readable",
    "recall_frame",
    "reference_bins",
    "refused_headline",
    "render_notebook",
    "row",
    "rubric_card",
    "rule_cases_chart",
    "rules_panel",
    "same_call_summary",
    "section",
    "shares_chart",
    "shares_table",
    "split_composition",
    "stacked_share_chart",
    "table",
    "transcripts",
    "verdict_overview",
    "verdict_overview_table",
    "verdict_panel",
    "version_movement",
    "widths_table",
    "work_from_project_root",
]
