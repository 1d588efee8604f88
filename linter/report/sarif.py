"""SARIF 2.1.0 for GitHub code scanning, built with the ``sarif-om`` object model.

Rule metadata goes in ``tool.driver.rules`` (GitHub shows it in the alert);
each result has a physical location relative to ``%SRCROOT%`` and a
``partialFingerprints`` entry from rule + path + object address, so alerts
survive lines moving. No absolute machine paths are written.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable
from urllib.parse import quote

import attr
import sarif_om as om

from mlcost_lint import DOCS_URL, __version__
from mlcost_lint.report import ReportInput, fingerprints
from mlcost_lint.rule import Finding, Rule

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "mlcostLint/v1"
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}


@attr.s
class _RuleProperties(om.PropertyBag):
    precision = attr.ib(default=None, metadata={"schema_property_name": "precision"})
    problem_severity = attr.ib(default=None, metadata={"schema_property_name": "problem.severity"})
    confidence = attr.ib(default=None, metadata={"schema_property_name": "confidence"})
    category = attr.ib(default=None, metadata={"schema_property_name": "category"})


@attr.s
class _ResultProperties(om.PropertyBag):
    address = attr.ib(default=None, metadata={"schema_property_name": "address"})
    cost = attr.ib(default=None, metadata={"schema_property_name": "cost"})


@attr.s
class _RunProperties(om.PropertyBag):
    cost = attr.ib(default=None, metadata={"schema_property_name": "cost"})


def _to_json(obj: Any) -> Any:
    """sarif-om objects -> JSON data, by each field's schema property name;
    None and the generator's -1 sentinels are left out."""
    if attr.has(type(obj)):
        out = {}
        for f in attr.fields(type(obj)):
            value = getattr(obj, f.name)
            if value is None or (value in (-1, -1.0) and f.default in (-1, -1.0)
                                 and not isinstance(value, bool)):
                continue
            out[f.metadata.get("schema_property_name", f.name)] = _to_json(value)
        return out
    if isinstance(obj, dict):
        return {k: _to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_json(v) for v in obj]
    return obj


def artifact_uri(path: str) -> str:
    """A relative, normalised URI for a display path."""
    clean = path.replace("\\", "/")
    while clean.startswith("./"):
        clean = clean[2:]
    return quote(clean, safe="/-._~")


def _escapes(path: str) -> bool:
    clean = path.replace("\\", "/")
    return clean.startswith("/") or clean == ".." or clean.startswith("../") or "/../" in clean


def uri_rebaser(paths: set[str]) -> Callable[[str], str]:
    """Display paths are relative to the working directory; when a scanned
    path lies outside it (``mlcost-lint ../infra``) a ``../`` URI would
    escape %SRCROOT%. Then every path is written relative to the deepest
    folder holding all of them, which becomes %SRCROOT%."""
    if not any(_escapes(p) for p in paths):
        return lambda p: p
    import os

    absolute = {p: os.path.abspath(p) for p in paths}
    base = os.path.commonpath([os.path.dirname(a) for a in absolute.values()]) if absolute else os.getcwd()
    return lambda p: os.path.relpath(absolute.get(p) or os.path.abspath(p), base).replace(os.sep, "/")


def help_uri(rule: type[Rule]) -> str:
    return f"{DOCS_URL}#{rule.code.lower()}-{rule.name}"


def _descriptor(rule: type[Rule]) -> om.ReportingDescriptor:
    sections = rule.doc_sections()
    what = sections.get("What it does", rule.summary)
    fix_line = f"Fix: {rule.fix}\n\n" if rule.fix else ""
    text_help = f"{rule.summary}\n\n{fix_line}" + "\n\n".join(f"{k}:\n{v}" for k, v in sections.items())
    markdown = (f"**{rule.summary}**\n\n" + (f"**Fix:** {rule.fix}\n\n" if rule.fix else "")
                + f"{rule.docs()}\n\n[{rule.code} {rule.name} in the rule docs]({help_uri(rule)})")
    return om.ReportingDescriptor(
        id=rule.code,
        name=rule.name,
        short_description=om.MultiformatMessageString(text=rule.summary),
        full_description=om.MultiformatMessageString(text=what[:1000]),
        help=om.MultiformatMessageString(text=text_help, markdown=markdown),
        help_uri=help_uri(rule),
        default_configuration=om.ReportingConfiguration(level=rule.level.value),
        properties=_RuleProperties(
            tags=["cost", rule.category.value],
            precision=rule.confidence.sarif_precision,
            problem_severity=_PROBLEM_SEVERITY[rule.level.value],
        ),
    )


def _escape_link_text(text: str) -> str:
    # SARIF message links are Markdown-like: brackets in the text are escaped.
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def result_message(finding: Finding) -> str:
    """The finding's message, plus a link to each related location: code
    scanning turns ``[text](N)`` into a link to relatedLocations id N."""
    from mlcost_lint.pricing import with_cost

    if not finding.related:
        return with_cost(finding)
    text = _escape_link_text(with_cost(finding))
    links = []
    for i, r in enumerate(finding.related, start=1):
        where = f"{r.location.path}:{r.location.line}"
        label = f"{r.message} ({where})" if r.message else where
        links.append(f"[{_escape_link_text(label)}]({i})")
    return f"{text} Related: {'; '.join(links)}."


_TOKEN = re.compile(r"[^\s:,=\[\]{}()]+")


class _Regions:
    """Regions with an end: GitHub's docs list endLine and endColumn as
    required. The end column is the end of the flagged token on the line
    (source read again only for files with findings); a multi-line region
    ends at the end of its last line."""

    def __init__(self, read_source: Callable[[str], list[str] | None],
                 rebase: Callable[[str], str] = lambda p: p) -> None:
        self.read_source = read_source
        self.rebase = rebase
        self.cache: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self.cache:
            self.cache[path] = self.read_source(path)
        return self.cache[path]

    def region(self, path: str, line: int, column: int, end_line: int | None) -> om.Region:
        line, column = max(line, 1), max(column, 1)
        last = end_line if end_line is not None and end_line >= line else line
        region = om.Region(start_line=line, start_column=column, end_line=last)
        source = self.lines(path)
        if source is None or last > len(source):
            return region
        if last == line:
            text = source[line - 1]
            match = _TOKEN.match(text, column - 1) if column - 1 <= len(text) else None
            region.end_column = column + (len(match.group(0)) if match else 1)
        else:
            region.end_column = len(source[last - 1]) + 1
        return region

    def physical(self, path: str, line: int, column: int, end_line: int | None = None) -> om.PhysicalLocation:
        return om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=artifact_uri(self.rebase(path)), uri_base_id="%SRCROOT%"),
            region=self.region(path, line, column, end_line),
        )


def build_log(data: ReportInput) -> om.SarifLog:
    rules = sorted(data.rules, key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(rules)}
    paths = {f.location.path for f in data.findings} | {r.location.path for f in data.findings for r in f.related}
    regions = _Regions(data.read_source, uri_rebaser(paths))
    results = []
    for f, fp in zip(data.findings, fingerprints(data.findings)):
        related = [
            om.Location(id=i + 1, physical_location=regions.physical(r.location.path, r.location.line,
                                                                    r.location.column, r.location.end_line),
                        message=om.Message(text=r.message))
            for i, r in enumerate(f.related)
        ]
        results.append(om.Result(
            rule_id=f.code,
            rule_index=index.get(f.code, -1),
            level=f.level.value,
            message=om.Message(text=result_message(f)),
            locations=[om.Location(physical_location=regions.physical(
                f.location.path, f.location.line, f.location.column, f.location.end_line))],
            partial_fingerprints={FINGERPRINT_KEY: fp},
            related_locations=related or None,
            properties=_ResultProperties(address=f.address, cost=f.cost.as_dict() if f.cost else None),
        ))
    driver = om.ToolComponent(
        name="mlcost-lint",
        version=__version__,
        semantic_version=__version__,
        information_uri=DOCS_URL.split("/blob/")[0],
        rules=[_descriptor(r) for r in rules],
        language=None,   # upload-sarif's schema copy has a broken 'language' pattern
    )
    # Internal errors (a rule that raised): the run did not complete, and says why.
    notifications = [om.Notification(
        level="error", message=om.Message(text=e.text()),
        associated_rule=om.ReportingDescriptorReference(id=e.code, index=index[e.code]) if e.code in index
        else om.ReportingDescriptorReference(id=e.code),
        locations=[om.Location(physical_location=om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=artifact_uri(e.path), uri_base_id="%SRCROOT%")))]
        if e.path and not e.path.startswith(("/", "../")) else None,
    ) for e in data.errors]
    invocation = om.Invocation(execution_successful=not data.errors,
                               tool_execution_notifications=notifications or None)
    run = om.Run(tool=om.Tool(driver=driver), results=results, column_kind="unicodeCodePoints", language=None,
                 invocations=[invocation], properties=_run_properties(data),
                 original_uri_base_ids={"%SRCROOT%": om.ArtifactLocation(
                     description=om.Message(text="The folder mlcost-lint ran in; result paths are relative to it."))})
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def _run_properties(data: ReportInput) -> _RunProperties | None:
    """The cost totals of the run (rules.md, Cost estimates), when a finding is priced."""
    from mlcost_lint.pricing import totals

    t = totals(data.findings)
    if not (t.any or t.unknown):
        return None
    return _RunProperties(cost={**t.as_dict(), "prices": dict(data.price_info)})


def render(data: ReportInput) -> str:
    return json.dumps(_to_json(build_log(data)), indent=2) + "\n"
