"""Gate verdicts for CI: a JUnit XML report and a Markdown summary for a pull request.

:func:`junit_xml` writes ``<testsuites>`` with two suites. ``evalkit.gate.dimensions``
holds one ``<testcase>`` per gated dimension, failing exactly when the dimension fails;
its ``<failure>`` carries every blocking reason with its ADR id. ``evalkit.gate.hard_fails``
holds one failing ``<testcase>`` per hard fail (a reason that applies to every dimension,
such as unratified constants, is one test case naming them all). The first suite's
properties name the judge, the constants hash and the other hashes in force.

:func:`markdown_summary` writes the verdict table and the reasons, with every piece of
text that may come from a case or a ledger escaped (``|``, Markdown and HTML markup,
``@`` mentions), so that a pull-request comment shows it as written.

:func:`write_ci_reports` writes the files only whole (temporary file, then rename).
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evalkit.errors import GateInputError
from evalkit.gate._threshold import fmt_interval, fmt_value
from evalkit.gate._verdict import ADR, DimensionVerdict, GateVerdict, Reason

BLOCKING = ("hard_fail", "fail")
# Characters XML 1.0 cannot hold at all (a ledger string could carry them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Escaped text never starts a line, so line-start syntax (#, -, +, 1.) needs no escape.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _judge_name(judge: Mapping[str, Any]) -> str:
    if "judges" in judge:
        return ", ".join(str(j.get("judge")) for j in judge["judges"])
    return str(judge.get("judge", "unknown"))


def _properties(verdict: GateVerdict) -> list[tuple[str, str]]:
    """(name, value) pairs: overall verdict, judge, and every hash the gate read."""
    props = [("overall", verdict.overall), ("judge", _judge_name(verdict.judge))]
    for key in ("backend", "model", "response_model"):
        if verdict.judge.get(key) is not None:
            props.append((f"judge.{key}", str(verdict.judge[key])))
    for key, value in verdict.hashes.items():
        if isinstance(value, Mapping):
            props += [(f"{key}.{k}", str(v)) for k, v in value.items()]
        elif isinstance(value, list | tuple):
            props.append((key, ", ".join(map(str, value))))
        else:
            props.append((key, json.dumps(value) if value is None else str(value)))
    return props


def _reason_line(reason: Reason) -> str:
    path = ADR.get(reason.adr)
    return f"{reason.code}: {reason}" + (f" [{path}]" if path else "")


def _summary(v: DimensionVerdict) -> str:
    kappa = fmt_value(v.kappa)
    ci = "" if v.ci_low is None else " " + fmt_interval(v.ci_low, v.ci_high)
    return f"{v.dimension}: {v.verdict}, kappa {kappa}{ci}, n {v.n}, threshold {v.threshold}"


def hard_fails(verdict: GateVerdict) -> list[tuple[Reason, list[str]]]:
    """Each distinct hard-fail reason with the dimensions it fails, in verdict order."""
    out: dict[Reason, list[str]] = {}
    for dim, v in verdict.dimensions.items():
        for reason in v.reasons:
            if reason.severity == "hard_fail":
                out.setdefault(reason, []).append(dim)
    return list(out.items())


def _suite(parent: ET.Element, name: str, cases: list[ET.Element]) -> ET.Element:
    failures = sum(1 for c in cases if c.find("failure") is not None)
    return ET.SubElement(
        parent,
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time="0",
    )


def junit_xml(verdict: GateVerdict) -> str:
    """The verdict as JUnit XML (see the module docstring); deterministic, no timestamp."""
    root = ET.Element("testsuites", name="evalkit gate")
    dim_cases = []
    for dim, v in verdict.dimensions.items():
        case = ET.Element("testcase", classname="evalkit.gate.dimension", name=dim, time="0")
        blocking = [r for r in v.reasons if r.severity in BLOCKING]
        if v.verdict == "FAIL":
            first = blocking[0] if blocking else None
            failure = ET.SubElement(
                case,
                "failure",
                message=_xml_text(
                    f"{first.message} ({first.adr.upper()})" if first else f"{dim} fails"
                ),
                type=first.severity if first else "fail",
            )
            failure.text = _xml_text("\n".join([_summary(v), *map(_reason_line, blocking)]))
        notes = [_reason_line(r) for r in v.reasons if r.severity not in BLOCKING]
        out = ET.SubElement(case, "system-out")
        out.text = _xml_text("\n".join([_summary(v), *notes]))
        dim_cases.append(case)
    hard_cases = []
    for reason, dims in hard_fails(verdict):
        case = ET.Element(
            "testcase",
            classname="evalkit.gate.hard_fail",
            name=f"{reason.code} ({', '.join(dims)})",
            time="0",
        )
        failure = ET.SubElement(
            case,
            "failure",
            message=_xml_text(f"{reason.message} ({reason.adr.upper()})"),
            type="hard_fail",
        )
        failure.text = _xml_text(f"{_reason_line(reason)}\ndimensions: {', '.join(dims)}")
        hard_cases.append(case)
    first_suite = _suite(root, "evalkit.gate.dimensions", dim_cases)
    props = ET.SubElement(first_suite, "properties")
    for name, value in _properties(verdict):
        ET.SubElement(props, "property", name=name, value=_xml_text(value))
    first_suite.extend(dim_cases)
    _suite(root, "evalkit.gate.hard_fails", hard_cases).extend(hard_cases)
    all_cases = dim_cases + hard_cases
    root.set("tests", str(len(all_cases)))
    root.set("failures", str(sum(1 for c in all_cases if c.find("failure") is not None)))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def md_escape(text: str) -> str:
    """``text`` safe in a Markdown table cell or list item: one line, control characters
    as U+FFFD, Markdown specials backslash-escaped, ``<``, ``>``, ``&`` and ``@`` as HTML
    entities."""
    text = " ".join(_NOT_XML.sub("\ufffd", str(text)).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text).replace("@", "&#64;")


def markdown_summary(verdict: GateVerdict) -> str:
    """The verdict for a pull-request comment: a heading, the judge and constants hash,
    the table (dimension, verdict, kappa, 95% CI, n, blocking reasons) and every reason."""
    mark = {"PASS": "PASS ✅", "FAIL": "FAIL ❌"}
    constants = str(verdict.hashes.get("constants_hash", "unknown"))
    lines = [
        f"### evalkit gate: {mark[verdict.overall]}",
        "",
        f"Judge: {md_escape(_judge_name(verdict.judge))} · constants hash "
        f"{md_escape(constants[:12])}",
        "",
        "| dimension | verdict | kappa | 95% CI | n | blocking reasons |",
        "| --- | --- | ---: | --- | ---: | --- |",
    ]
    for dim, v in verdict.dimensions.items():
        kappa, ci = fmt_value(v.kappa), fmt_interval(v.ci_low, v.ci_high)
        codes = [f"{r.code} ({r.adr.upper()})" for r in v.reasons if r.severity in BLOCKING]
        lines.append(
            f"| {md_escape(dim)} | {mark[v.verdict]} | {kappa} | {ci} | {v.n} | "
            f"{md_escape(', '.join(codes)) or '—'} |"
        )
    lines.append("")
    for dim, v in verdict.dimensions.items():
        if not v.reasons and not v.advice:
            continue
        lines += [f"#### {md_escape(dim)}", ""]
        for r in v.reasons:
            lines.append(f"- **{r.severity}** {md_escape(r.message)} ({r.adr.upper()})")
        for row in v.advice:
            lines.append(
                f"- advice: add {md_escape(str(row['add']))} case(s) labelled "
                f"{md_escape(str(row['bin']))} in {md_escape(str(row['locale']))}"
            )
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def write_ci_reports(
    verdict: GateVerdict, *, junit: str | Path | None = None, markdown: str | Path | None = None
) -> list[Path]:
    """Write the JUnit and/or Markdown reports, each whole or not at all.

    Both are rendered and written to temporary files beside their targets first, then
    renamed, so a failure leaves no partial file. The same path for both, or a path that
    cannot be written, is a :class:`GateInputError`. Returns the paths written.
    """
    targets: list[tuple[Path, Callable[[GateVerdict], str]]] = []
    if junit is not None:
        targets.append((Path(junit), junit_xml))
    if markdown is not None:
        targets.append((Path(markdown), markdown_summary))
    if len(targets) == 2 and targets[0][0].resolve() == targets[1][0].resolve():
        raise GateInputError(f"--junit and --markdown name the same file {targets[0][0]}")
    for path, _ in targets:
        if path.is_dir():
            raise GateInputError(f"cannot write the CI report {path}: it is a folder")
    staged: list[tuple[Path, Path]] = []
    try:
        for path, render in targets:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.writing")
            tmp.write_text(render(verdict), encoding="utf-8")
            staged.append((tmp, path))
        for tmp, path in staged:
            os.replace(tmp, path)
    except OSError as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise GateInputError(f"cannot write the CI report: {exc}") from None
    return [path for _, path in staged]


def remove_stale_reports(*paths: str | Path | None) -> list[Path]:
    """Delete reports left by an earlier run at ``paths``, before a run computes its
    verdict, so that a run that ends with no verdict (exit 2 or 3) leaves none and CI never
    reads an old verdict as this one's. Returns the paths removed."""
    removed = []
    for p in paths:
        if p is not None and Path(p).is_file():
            Path(p).unlink()
            removed.append(Path(p))
    return removed
