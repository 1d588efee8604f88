"""Kustomize patches are fragments, not workloads (rules.md, Settled questions):
no MLC102/MLC204/MLC206/MLC403/... on a strategic-merge patch that only sets args
or limits; the base is linted as usual; without a kustomization in the scan the
same file is a workload."""

from __future__ import annotations

import shutil

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

BASE = FIXTURES / "link" / "kustomize"


def test_patches_are_fragments_and_the_base_is_linted():
    result = lint_dir(BASE, cwd=BASE, required_tags=["team"])
    assert sorted(w.document.path for w in result.project.kubernetes.fragments) == [
        "overlays/gpu/fragment-beside.yaml", "overlays/gpu/gpu-limits.yaml", "overlays/gpu/job-patch.yaml"]
    assert [w.document.path for w in result.project.kubernetes.workloads] == ["base/job.yaml"]
    assert triples(result) == [
        ("MLC102", "base/job.yaml", 7, "Job train pod template lacks cost label team (required-tags); cost "
                                        "allocators read pod labels: add it to spec.template.metadata.labels")]


def test_without_the_kustomization_the_patch_is_linted(tmp_path):
    shutil.copytree(BASE, tmp_path / "k")
    (tmp_path / "k" / "overlays" / "gpu" / "kustomization.yaml").unlink()
    r = run_cli(".", "--no-cache", cwd=tmp_path / "k")
    assert "overlays/gpu/job-patch.yaml:5:1: MLC204 [warning] Job train holds 1 GPU" in r.out
    assert "overlays/gpu/gpu-limits.yaml:6:3: MLC206 [warning]" in r.out
