"""The rule registry (mlcost_lint.registry) is what the rules declare: the
generated table matches the rule classes, and choosing rules, judging
suppressions and naming rules in a report import no rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mlcost_lint.config import Settings
from mlcost_lint.engine import all_rules, selected_rule_info, selected_rules, selection_notices
from mlcost_lint.registry import info_of, render, rule_index

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "linter" / "registry_table.py"


def test_the_table_is_generated_from_the_rules():
    # A rule added or changed without `python -m mlcost_lint.registry --output linter/registry_table.py`
    assert TABLE.read_text(encoding="utf-8") == render(all_rules()), \
        "linter/registry_table.py is out of date: python -m mlcost_lint.registry --output linter/registry_table.py"
    assert rule_index() == tuple(map(info_of, all_rules()))
    assert [info.load() for info in rule_index()] == list(all_rules())


def test_check_fails_on_a_stale_table(tmp_path):
    stale = tmp_path / "registry_table.py"
    stale.write_text(TABLE.read_text(encoding="utf-8").replace("'MLC001'", "'MLC009'", 1), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "mlcost_lint.registry", "--check", str(stale)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "is out of date" in r.stderr
    r = subprocess.run([sys.executable, "-m", "mlcost_lint.registry", "--check", str(TABLE)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_selection_from_the_registry_is_the_selection_of_the_rules():
    cases = [Settings(), Settings(select=["ALL"]), Settings(select=["MLC2"], ignore=["MLC204"]),
             Settings(extend_select=["missing-cost-tags"]), Settings(ignore=["MLC3", "MLC002"])]
    for settings in cases:
        chosen = selected_rule_info(settings)
        assert [r.load() for r in chosen] == selected_rules(settings)
        assert selection_notices(settings, chosen) == selection_notices(settings, selected_rules(settings))
    assert [r.code for r in selected_rule_info(Settings(select=["MLC2"], ignore=["MLC204"]))] == \
        [r.code for r in all_rules() if r.code.startswith("MLC2") and r.code != "MLC204"]


_NO_RULE_RUN = """
import sys
from mlcost_lint.config import Settings
from mlcost_lint.engine import selected_rule_info, selection_notices, check_selectors
from mlcost_lint.suppress import unused_suppressions, SuppressionResult
settings = Settings(select=["ALL"])
check_selectors(["MLC2", "spot-without-checkpointing"], "select")
chosen = selected_rule_info(settings)
selection_notices(settings, chosen)
unused_suppressions([], SuppressionResult(), chosen)
print(sorted(m for m in sys.modules if m.startswith("mlcost_lint.rules.")))
"""


def test_choosing_rules_and_judging_suppressions_import_no_rule():
    r = subprocess.run([sys.executable, "-c", _NO_RULE_RUN], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
