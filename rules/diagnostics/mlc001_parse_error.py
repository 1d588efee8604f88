from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import Location
from mlcost_lint.rule import Category, Confidence, Finding, Level, Rule


class ParseErrorRule(Rule):
    """
    ## What it does
    Reports a file that looks like one of ours (Terraform, a Kubernetes
    manifest, a training config) but could not be read or parsed: a syntax
    error, bad encoding, a binary file, a file over the size limit, nesting
    deeper than the limit, a YAML alias bomb, an unsafe YAML tag, or a
    Terraform expression that exceeded the evaluation budget. The finding
    carries the parser's line and column. Every other file is still linted.

    YAML that holds Helm or Go template syntax (`{{ ... }}`) and does not parse
    is skipped silently: render it first (`helm template . | mlcost-lint -`).

    ## Why is this expensive
    A file the linter cannot read is a file none of the cost rules checked.
    A broken manifest or config also usually fails at deploy time, after CI
    minutes or a GPU node's start-up time have been paid for.

    ## Example
    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: train
     spec:            # bad indentation
    ```

    ## Fix
    Fix the syntax at the reported line, or exclude generated files with
    `exclude` in `.mlcost-lint.toml`. Raise `max-file-size-mb` for large
    generated files you want linted.
    """

    code = "MLC001"
    name = "parse-error"
    level = Level.ERROR
    confidence = Confidence.HIGH
    category = Category.DIAGNOSTICS
    summary = "File could not be read or parsed"
    fix = "Fix the syntax at the reported position, or exclude the file."

    def check(self, project, settings) -> Iterator[Finding]:
        for pf in project.files:
            for err in pf.errors:
                yield self.finding(err.message, Location(err.path, err.line, err.column), f"file:{err.path}")
        for location, message in project.terraform.diagnostics:
            yield self.finding(message, location, f"file:{location.path}")
