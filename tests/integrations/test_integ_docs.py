"""docs/rules.md is generated from the rule modules and must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mlc_testing import run_cli

ROOT = Path(__file__).resolve().parents[2]
RULES_MD = ROOT / "docs" / "rules.md"


def test_rules_md_is_up_to_date():
    from mlcost_lint.docs import generate

    assert RULES_MD.read_text(encoding="utf-8") == generate(), \
        "docs/rules.md is out of date: run `python -m mlcost_lint.docs --output docs/rules.md`"


def test_docs_check_command(tmp_path: Path):
    stale = tmp_path / "rules.md"
    stale.write_text("# old\n")
    r = subprocess.run([sys.executable, "-m", "mlcost_lint.docs", "--check", str(stale)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip() == (f"mlcost-lint docs: {stale} is out of date; run "
                                f"`python -m mlcost_lint.docs --output {stale}`")
    r = subprocess.run([sys.executable, "-m", "mlcost_lint.docs", "--output", str(stale)], timeout=120)
    assert r.returncode == 0
    r = subprocess.run([sys.executable, "-m", "mlcost_lint.docs", "--check", str(stale)], timeout=120)
    assert r.returncode == 0


def test_every_rule_has_a_section_with_its_metadata():
    from mlcost_lint.docs import generate, github_anchor
    from mlcost_lint.engine import all_rules

    text = generate()
    for rule in all_rules():
        heading = f"### {rule.code} {rule.name}"
        assert heading in text.splitlines(), rule.code
        section = text.split(heading + "\n", 1)[1].split("\n### ", 1)[0]
        assert section.startswith(f"\nLevel: `{rule.level.value}` · Confidence: `{rule.confidence.value}` · "
                                  f"Category: `{rule.category.value}`\n")
        for name in ("What it does", "Why is this expensive", "Example", "Fix"):
            assert f"#### {name}\n" in section, (rule.code, name)
        assert f"| [{rule.code}](#{github_anchor(heading[4:])}) |" in text


def test_github_anchor_matches_github_slugger():
    from mlcost_lint.docs import github_anchor

    assert github_anchor("MLC102 missing-cost-labels") == "mlc102-missing-cost-labels"
    assert github_anchor("What it does?") == "what-it-does"
    assert github_anchor("Why is this expensive") == "why-is-this-expensive"
    assert github_anchor("snake_case & C++") == "snake_case--c"


def test_explain_mlc002_through_cli():
    r = run_cli("explain", "MLC002")
    assert r.code == 0
    assert r.out.startswith("# MLC002 unused-suppression\n\nLevel: note · Confidence: high · Category: diagnostics\n")
