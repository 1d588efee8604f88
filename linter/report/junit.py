"""JUnit XML, for CI systems that show test reports (GitLab ``reports:
junit``, Jenkins, Azure Pipelines): one ``testsuite`` per file with
findings, one failing ``testcase`` per finding. A run with no findings is
one passing test case, so the report is never empty."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from mlcost_lint.report import ReportInput


def render(data: ReportInput) -> str:
    names = {r.code: r.name for r in data.rules}
    findings = sorted(data.findings, key=lambda f: f.sort_key())
    root = ET.Element("testsuites", name="mlcost-lint", tests=str(max(len(findings), 1)),
                      failures=str(len(findings)), errors=str(len(data.errors)))
    if not findings:
        suite = ET.SubElement(root, "testsuite", name="mlcost-lint", tests="1", failures="0",
                              errors=str(len(data.errors)))
        ET.SubElement(suite, "testcase", classname="mlcost-lint",
                      name=f"no findings in {data.files_scanned} file{'s' if data.files_scanned != 1 else ''}")
    for path, group in groupby(findings, key=lambda f: f.location.path):
        items = list(group)
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items)), failures=str(len(items)),
                              errors="0")
        for f in items:
            loc = f.location
            case = ET.SubElement(suite, "testcase", classname=path,
                                 name=f"{f.code} {names.get(f.code, '')} at {loc.line}:{loc.column}".replace("  ", " "),
                                 file=path, line=str(loc.line))
            failure = ET.SubElement(case, "failure", type=f.code, message=f.message)
            failure.text = f"{path}:{loc.line}:{loc.column}: {f.code} [{f.level.value}] {f.message}"
    for error in data.errors:
        suite = ET.SubElement(root, "testsuite", name=f"internal error in {error.code}", tests="1",
                              failures="0", errors="1")
        case = ET.SubElement(suite, "testcase", classname="mlcost-lint", name=error.code)
        ET.SubElement(case, "error", type="internal-error", message=error.text())
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
