"""A small catalogue for the report tests: balanced labels, markup payloads in transcripts.

Payloads sit in user turns and agent replies of calibration and held-out cases. The
self-harm labels of the payload cases are chosen to disagree with the baseline judge, so
the calibration study shows those conversations among its disagreements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.catalogue import Catalogue, load
from tests.factory import BALANCED_DESIGN as DESIGN
from tests.factory import STRATUM_SIGNAL as SIGNAL
from tests.factory import copy_frozen, make_case, write_cases, write_labels, write_rule_cases

#: Ten markup and script payloads; each must render as text. ``window.__pwned`` is the
#: tripwire a payload sets if it ever runs.
PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    '<svg onload="window.__pwned=3"><circle r="4"></circle></svg>',
    "</div></div></main><script>window.__pwned=4</script>",
    '<iframe src="javascript:top.__pwned=5"></iframe>',
    '"><script>window.__pwned=6</script><b x="',
    "</script><script>window.__pwned=7</script>",
    '<a href="javascript:window.__pwned=8" id="pwn-link">click me</a>',
    "<style>body{display:none !important}</style><b>bold?</b>",
    '<details open ontoggle="window.__pwned=10">{{ 7*7 }} ${7*7} <!-- c --> &amp;</details>',
)

#: A fake key planted in the environment of the report runs; it must land in no output.
FAKE_KEY = "sk-ant-FAKE-planted-0000"

SOURCE = {"id": "s", "kind": "faq", "title": "Hydration", "text": "Drink water when thirsty."}


def _cases(locale: str, copies: int) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    cases, labels = [], []
    for k in range(copies):
        for j, (stratum, sh, esc, faith) in enumerate(DESIGN):
            cid = f"{locale}-{k}-{j}"
            n = len(cases)
            payload = PAYLOADS[n % len(PAYLOADS)] if locale == "en-US" and k == 0 else ""
            sig = SIGNAL.get(stratum, "none")
            user = (
                f"Case {cid}: I have a question about my week. {payload}".strip(),
                f"Second message of {cid}, where things get heavier for me.",
            )
            signals = ("none", sig) if sig != "none" else ("none", "none")
            replies = (
                f"Thanks for telling me about {cid}. {payload}".strip(),
                f"Reply to the second message of {cid}.",
            )
            cases.append(
                make_case(
                    cid,
                    locale=locale,
                    stratum=stratum,
                    family=f"fam-{j}-{k % 2}",
                    user=user,
                    signals=signals,
                    replies=replies,
                    emergency="emergent" if esc != "low" else "none",
                    sources=[SOURCE],
                )
            )
            labels += [
                (cid, "self_harm", sh),
                (cid, "escalation", esc),
                (cid, "faithfulness", faith),
            ]
    return cases, labels


def _heldout(locale: str) -> list[dict[str, Any]]:
    strata = ["benign", "medical_emergency", "masked_ideation", "explicit_ideation", "benign"]
    out = []
    for i, stratum in enumerate(strata):
        cid = f"ho-{locale}-{i}"
        sig = SIGNAL.get(stratum, "none")
        payload = PAYLOADS[(i + 3) % len(PAYLOADS)]
        out.append(
            make_case(
                cid,
                locale=locale,
                stratum=stratum,
                split="heldout",
                family=f"ho-fam-{locale}-{i}",
                user=(f"Held-out {locale} number {i}, quite unlike anything else. {payload}",),
                signals=(sig,),
                replies=(f"Held-out reply {i} for {locale}.",),
            )
        )
    return out


def build_world(root: Path, copies: int = 2) -> Catalogue:
    """Write the catalogue at ``root`` and return it loaded (50 cases, 10 held out)."""
    copy_frozen(root)
    labels: list[tuple[str, str, str]] = []
    for locale in ("en-US", "en-GB"):
        cases, labs = _cases(locale, copies)
        write_cases(root, "calibration", locale, "world", cases)
        write_cases(root, "heldout", locale, "world", _heldout(locale))
        labels += labs
    write_labels(root, "world", labels)
    write_rule_cases(root)
    return load(root)


def disagree_on_payloads(root: Path, catalogue: Catalogue, ledger: Path) -> Catalogue:
    """Rewrite the self-harm labels of payload cases to differ from the baseline judge."""
    from evalkit.judge import judge_cases

    rows = judge_cases(
        catalogue,
        catalogue.split("calibration"),
        ["self_harm"],
        judge="baseline",
        ledger=ledger,
        progress=False,
    )
    final = rows.sort_values("turn").drop_duplicates("case_id", keep="last")
    judged = dict(zip(final["case_id"], final["bin"], strict=True))
    bins = list(catalogue.constants.bins)
    labels = []
    for lab in catalogue.labels:
        value = lab.bin
        text = " ".join(t.text for t in catalogue.case(lab.case_id).turns)
        if lab.dimension == "self_harm" and any(p in text for p in PAYLOADS):
            answer = judged.get(lab.case_id)
            value = bins[-1] if answer == bins[0] else bins[0]
        labels.append((lab.case_id, lab.dimension, value))
    write_labels(root, "world", labels)
    return load(root)


def seal_heldout(root: Path, labeler: str = "owner") -> Path:
    """Fill the blind template of the catalogue at ``root`` with fixed bins and seal it, as
    an owner would (the template is written first: the seal covers it, ADR-0015)."""
    import csv

    from evalkit.heldout import NOT_APPLICABLE, seal_labels, template_rows, write_template
    from evalkit.heldout._template import template_columns

    cat = load(root)
    sheet = root / "heldout" / "filled.csv"
    sheet.parent.mkdir(parents=True, exist_ok=True)
    write_template(cat, sheet.parent / "template.csv")
    rows = template_rows(cat)
    for i, row in enumerate(rows):
        for dim in cat.constants.gated_dimensions:
            if row[dim] != NOT_APPLICABLE:
                row[dim] = ("low", "partial", "high")[(i + len(dim)) % 3]
        row["labeler"] = labeler
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=template_columns(cat))
        writer.writeheader()
        writer.writerows(rows)
    seal_labels(cat, sheet)
    return sheet
