"""fixes_for gathers what its fixers read once per run, not once per
finding: the standalone-config lookup scanned every file and every
training config per finding, which grew with the square of the project
(4 copies of bench/'s tree: 0.07 s -> 1.87 s of one run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcost_lint.config import load_settings
from mlcost_lint.fix import FixContext, fixes_for
from mlcost_lint.fix import training as fix_training
from mlcost_lint.pipeline import LintOptions, lint

DATA = Path(__file__).parent.parent / "integrations" / "data" / "fix"


def test_index_built_once_for_every_finding_and_each_config_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    text = (DATA / "sft_before.yaml").read_text()
    for i in range(30):
        folder = tmp_path / f"team{i}" / "configs"
        folder.mkdir(parents=True)
        (folder / "sft.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    settings = load_settings(None, tmp_path)
    result = lint(["."], settings, LintOptions(use_cache=False, jobs=1))
    findings = [f for f in result.findings if f.code == "MLC301"]
    assert len(findings) == 30

    built = []
    real = fix_training._standalone_yaml_configs

    def counting(project):
        built.append(project)
        return real(project)

    monkeypatch.setattr(fix_training, "_standalone_yaml_configs", counting)
    fixes = fixes_for(result.findings, result.project)
    assert len(built) == 1
    assert sorted(fix.edits[0].path for _, fix in fixes) == sorted(f"team{i}/configs/sft.yaml" for i in range(30))
    assert {fix.description for _, fix in fixes} == {"add save_total_limit: 2"}


def test_context_builds_each_index_on_first_use_only():
    calls = []
    context = FixContext(project=object())

    def build(project):
        calls.append(project)
        return {"built": len(calls)}

    assert context.once(build) == {"built": 1}
    assert context.once(build) == {"built": 1}
    assert calls == [context.project]
