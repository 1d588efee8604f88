"""Rule.reports_in: every finding is in a file that holds what its rule
declares, and a run that reports only some files (the pre-commit hook),
which skips the rules those files cannot hold findings of, reports exactly
what the whole run reports in them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlc_testing import CORPUS, FIXTURES, lint_dir

from mlcost_lint.config import Settings
from mlcost_lint.engine import all_rules, reports_held, run_rules, selected_rules
from mlcost_lint.rule import Reports

CORPUS_V2 = CORPUS.parent / "corpus-v2"
# Projects with Terraform, workloads and training configs side by side, and
# the cases the declarations are hardest for (module callers, ParallelCluster
# pools in YAML, Slurm scripts, managed jobs declared in Terraform).
_FIXTURE_PROJECTS = ("demo", "demo-managed", "rules", "managed", "link", "terraform", "training")


def _lint(root: Path, report: frozenset[str] | None = None):
    return lint_dir(root, root, report_paths=report, select=["ALL"])


def _misplaced(root: Path) -> list[str]:
    """Findings in a file holding none of what their rule declares."""
    result = _lint(root)
    declared = {rule.code: rule.reports_in for rule in all_rules()}
    out = []
    for f in result.findings:
        wanted = declared[f.code]
        if wanted is not None and not wanted & reports_held(result.project, frozenset({f.location.path})):
            out.append(f"{root.name}: {f.code} at {f.location.path}:{f.location.line} "
                       f"(holds {sorted(reports_held(result.project, frozenset({f.location.path})))})")
    return out


def _key(f) -> tuple:
    return (f.code, f.location.path, f.location.line, f.location.column, f.message, f.address)


@pytest.mark.parametrize("name", _FIXTURE_PROJECTS)
def test_fixture_findings_are_where_their_rule_reports(name):
    assert _misplaced(FIXTURES / name) == []


@pytest.mark.skipif(not CORPUS_V2.is_dir(), reason="needs ../shared/corpus and corpus-v2 beside the repository")
def test_corpus_findings_are_where_their_rule_reports():
    repos = sorted(p for base in (CORPUS, CORPUS_V2) for p in base.iterdir() if p.is_dir())
    assert len(repos) > 20
    assert [m for repo in repos for m in _misplaced(repo)] == []


def test_every_rule_declares_where_it_reports():
    # Only diagnostics (parse errors, unused suppressions) may be anywhere.
    anywhere = sorted(rule.code for rule in all_rules() if rule.reports_in is None)
    assert anywhere == ["MLC001", "MLC002"]


@pytest.mark.parametrize("name", ["demo", "demo-managed"])
def test_each_file_reported_alone_equals_the_whole_run_filtered(name):
    root = FIXTURES / name
    whole = _lint(root)
    paths = sorted({pf.path for pf in whole.files if pf.path})
    assert len(paths) >= 4
    by_path: dict[str, list] = {}
    for f in whole.findings:
        by_path.setdefault(f.location.path, []).append(_key(f))
    assert len(by_path) >= 2
    for path in paths:
        alone = _lint(root, frozenset({path}))
        assert [_key(f) for f in alone.findings] == by_path.get(path, []), path


def test_report_run_skips_the_rules_its_files_cannot_hold(monkeypatch):
    # A training config alone: the Terraform-only and workload-only rules
    # do not run (this test fails if run_rules ignores report_paths).
    root = FIXTURES / "demo"
    whole = _lint(root)
    config = next(c.path for c in whole.project.training if not any(
        w.location.path == c.path for w in whole.project.kubernetes.workloads))
    assert reports_held(whole.project, frozenset({config})) == {Reports.TRAINING}
    ran: list[str] = []
    settings = Settings(root=root, select=["ALL"])
    rules = selected_rules(settings)
    for rule in rules:
        original = rule.check
        monkeypatch.setattr(rule, "check", lambda self, project, s, original=original, code=rule.code:
                            (ran.append(code), original(self, project, s))[1])
    run_rules(whole.project, settings, rules, report_paths=frozenset({config}))
    assert "MLC601" in ran and "MLC403" in ran
    assert "MLC101" not in ran and "MLC204" not in ran and "MLC303" not in ran
    ran.clear()
    run_rules(whole.project, settings, rules)
    assert {"MLC101", "MLC204", "MLC303", "MLC601"} <= set(ran)


def test_terraform_file_holds_cloud_even_when_it_declares_nothing(tmp_path):
    (tmp_path / "versions.tf").write_text('terraform {\n  required_version = ">= 1.5"\n}\n')
    result = _lint(tmp_path)
    assert reports_held(result.project, frozenset({"versions.tf"})) == {Reports.CLOUD}
    assert reports_held(result.project, frozenset({"elsewhere.yaml"})) == frozenset()

