"""Generate the rule reference, docs/rules.md, from the rule modules.

    python -m mlcost_lint.docs                     # print it
    python -m mlcost_lint.docs --output docs/rules.md
    python -m mlcost_lint.docs --check docs/rules.md   # exit 1 if out of date

One section per rule, headed ``### MLC102 missing-cost-labels`` so that its
GitHub anchor is ``#mlc102-missing-cost-labels``: the SARIF ``helpUri`` of
each rule (``mlcost_lint.report.sarif.help_uri``) points there.
"""

from __future__ import annotations

import re
import sys
from itertools import groupby

from mlcost_lint.rule import Rule

HEADER = """# mlcost-lint rules

<!-- Generated from the rule modules by `python -m mlcost_lint.docs --output docs/rules.md`.
     Do not edit by hand: edit the rule's docstring and regenerate. -->

Every rule has a code (used in `--select`, `--ignore`, suppression comments,
baselines and code scanning), a kebab-case name accepted wherever a code is,
a default level (`error`, `warning`, `note`: the SARIF levels), a confidence
(`high`, `medium`, `low`: SARIF `precision` very-high, high, medium) and a
cost category. `mlcost-lint explain CODE` prints a rule's section below.
"""

_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (github-slugger): lower
    case, punctuation other than '-' and '_' removed, spaces to '-'."""
    return _SLUG_DROP.sub("", heading.strip().lower()).replace(" ", "-")


def rule_heading(rule: type[Rule]) -> str:
    return f"{rule.code} {rule.name}"


def _category_title(value: str) -> str:
    return value.capitalize()


def render(rules: tuple[type[Rule], ...] | list[type[Rule]]) -> str:
    rules = sorted(rules, key=lambda r: r.code)
    out = [HEADER]
    out.append("| Code | Name | Level | Confidence | Category | Summary |")
    out.append("|---|---|---|---|---|---|")
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        out.append(f"| [{r.code}](#{github_anchor(rule_heading(r))}) | {r.name} | {r.level.value} | "
                   f"{r.confidence.value} | {r.category.value} | {summary} |")
    out.append("")
    # Categories in the order of their first code.
    order: dict[str, str] = {}
    for r in rules:
        order.setdefault(r.category.value, r.code)
    ordered = sorted(rules, key=lambda r: (order[r.category.value], r.code))
    for category, group in groupby(ordered, key=lambda r: r.category.value):
        out.append(f"## {_category_title(category)}")
        out.append("")
        for r in group:
            out.append(f"### {rule_heading(r)}")
            out.append("")
            out.append(f"Level: `{r.level.value}` · Confidence: `{r.confidence.value}` · "
                       f"Category: `{r.category.value}`")
            out.append("")
            out.append(f"{r.summary}.")
            if r.fix:
                out.append("")
                out.append(f"**Fix:** {r.fix}")
            out.append("")
            for name, body in r.doc_sections().items():
                out.append(f"#### {name}")
                out.append("")
                if body:
                    out.append(body)
                    out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def generate() -> str:
    from mlcost_lint.engine import all_rules

    return render(all_rules())


def main(argv: list[str] | None = None) -> int:
    from mlcost_lint.generated_file import main as generated_main

    return generated_main(argv, "mlcost_lint.docs", __doc__.splitlines()[0], generate)


if __name__ == "__main__":
    sys.exit(main())
