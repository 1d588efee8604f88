"""The model and link stages build with cyclic collection paused and freeze
what they built (issue 17, item 4): every full collection walked the whole
growing model for nothing, the one step that grew faster than the input on
4 copies of the bench repository. No timing here; this checks the state the
stages leave the collector in, which a lost ``gc.enable`` or a missing
freeze would change."""

from __future__ import annotations

import gc
from pathlib import Path

from mlcost_lint.config import Settings
from mlcost_lint.discover import SourceFile
from mlcost_lint.parse.document import FileKind
from mlcost_lint.parse_stage import parse_all
from mlcost_lint.pipeline import LintOptions, build_model

TF = '''resource "aws_eks_node_group" "gpu" {
  cluster_name   = "ml"
  instance_types = ["p4d.24xlarge"]
  capacity_type  = "SPOT"
  scaling_config {
    desired_size = 2
    max_size     = 4
    min_size     = 0
  }
}
'''


def _parsed(tmp_path: Path):
    (tmp_path / "main.tf").write_text(TF)
    settings = Settings(root=str(tmp_path))
    files = [SourceFile(tmp_path / "main.tf", "main.tf", FileKind.TERRAFORM)]
    return parse_all(files, settings, LintOptions(use_cache=False, jobs=1)), settings


def test_model_is_frozen_and_collection_restored(tmp_path: Path):
    parsed, settings = _parsed(tmp_path)
    gc.unfreeze()
    assert gc.isenabled()
    project = build_model(parsed, settings, [], {})
    try:
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert all(o is not project for o in gc.get_objects())   # frozen: outside the collected generations
        assert [r.address for r in project.terraform.resources] == ["aws_eks_node_group.gpu"]
    finally:
        gc.unfreeze()


def test_a_disabled_collector_stays_disabled(tmp_path: Path):
    parsed, settings = _parsed(tmp_path)
    gc.disable()
    try:
        build_model(parsed, settings, [], {})
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_rules_run_with_collection_paused_and_findings_frozen(tmp_path: Path):
    # The rules stage too (engine.run_rules): its findings and shared indexes
    # live to the end of the run; full collections re-walked them.
    from mlcost_lint.engine import run_rules, selected_rules
    from mlcost_lint.model.core import Location
    from mlcost_lint.rule import Finding

    parsed, settings = _parsed(tmp_path)
    project = build_model(parsed, settings, [], {})
    seen: list[bool] = []

    class Probe:
        code = "MLC999"

        def check(self, project, settings):
            seen.append(gc.isenabled())
            yield Finding("MLC999", "probe", Location("main.tf", 1, 1), "aws_eks_node_group.gpu")

    try:
        findings = run_rules(project, settings, [*selected_rules(settings), Probe])
        assert seen == [False]
        assert gc.isenabled()
        assert [f.code for f in findings] == ["MLC999"]
        assert all(o is not findings[0] for o in gc.get_objects())   # frozen with the model
    finally:
        gc.unfreeze()
