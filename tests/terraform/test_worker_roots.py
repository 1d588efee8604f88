"""Terraform roots evaluated by the parse workers of a cold run
(model/terraform/worker_roots.py): how files are grouped, when the parent
replays a worker's evaluation, and that the findings are those of one
process whichever way each root was evaluated."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from mlc_testing import cached_project
from mlcost_lint import parse_stage
from mlcost_lint.config import Settings
from mlcost_lint.model.terraform import builder as tf_builder
from mlcost_lint.model.terraform import worker_roots
from mlcost_lint.model.terraform.worker_roots import WorkerRoots, terraform_groups
from mlcost_lint.parse.document import FileKind
from mlcost_lint.pipeline import LintOptions, lint

TF, VARS, JSON, YAML = FileKind.TERRAFORM, FileKind.TERRAFORM_VARS, FileKind.TERRAFORM_JSON, FileKind.YAML


def test_groups_are_directories_joined_by_the_local_modules_their_text_calls():
    files = [
        ("envs/prod/main.tf", TF, b'module "gpu" {\n  source = "../../modules/gpu"\n}\n'),
        ("envs/prod/terraform.tfvars", VARS, b'size = "p5.48xlarge"\n'),
        ("modules/gpu/main.tf", TF, b'resource "aws_instance" "x" {}\n'),
        ("other/main.tf", TF, b'module "s" { source="./sub" } # and a comment\n'),
        ("other/sub/x.tf", TF, b'variable "v" {}\n'),
        ("registry/main.tf", TF, b'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n}\n'),
        ("gone/main.tf", TF, b'module "m" {\n  source = "../not-scanned"\n}\n'),
        ("json/main.tf.json", JSON, b'{"module": {"m": {"source": "../modules/gpu"}}}'),
        ("k8s/job.yaml", YAML, b"kind: Job\n"),
    ]
    groups = {g.dirs: (g.members, g.evaluate) for g in terraform_groups(files)}
    assert groups == {
        frozenset({"envs/prod", "modules/gpu"}): ([0, 1, 2], True),
        frozenset({"other", "other/sub"}): ([3, 4], True),
        frozenset({"registry"}): ([5], True),
        frozenset({"gone"}): ([6], True),
        # the parent reads a .tf.json file's module sources: its group is the parent's to evaluate
        frozenset({"json"}): ([7], False),
    }


def test_a_worker_evaluation_is_replayed_only_when_the_worker_had_all_it_reads():
    roots = WorkerRoots()
    evaluation = pickle.dumps("an evaluation")
    roots.add(frozenset({"app", "modules/a"}), {"app": (("app", "modules/a"), evaluation)})
    roots.add(frozenset({"solo"}), {"solo": (("solo", "modules/a"), evaluation)})
    roots.dir_files = {"app": ["app/main.tf"], "modules/a": ["modules/a/main.tf"], "solo": ["solo/main.tf"],
                       "modules/b": ["modules/b/main.tf"], "elsewhere": ["elsewhere/main.tf"]}
    # another root calling the same module does not matter (it is evaluated on its own)
    roots.called = {"app": {"modules/a"}, "elsewhere": {"modules/a"}}
    assert roots.manifest_key("app", []) == ("worker", "app", None)
    # its evaluation looked up a scanned directory its group does not hold
    assert roots.manifest_key("solo", []) is None
    assert roots.manifest_key("elsewhere", []) is None      # no worker evaluated it
    # the parent's call graph reaches a directory the worker did not have (a call the pattern missed)
    roots.called = {"app": {"modules/a"}, "modules/a": {"modules/b"}}
    assert roots.manifest_key("app", []) is None
    roots.called = {"app": {"modules/a"}}
    assert roots.lookup(roots.manifest_key("app", [])) == "an evaluation"


def test_a_large_set_of_joined_directories_is_split_by_its_roots():
    module = ("modules/pool/main.tf", TF, b'resource "aws_instance" "x" {}\n' * 4)
    roots = [(f"envs/e{i}/main.tf", TF, b'module "p" {\n  source = "../../modules/pool"\n}\n' + b"#" * 200)
             for i in range(6)]
    files = [module, *roots]
    whole = terraform_groups(files)
    assert [(g.members, g.extra) for g in whole] == [([0, 1, 2, 3, 4, 5, 6], frozenset())]
    split = terraform_groups(files, max_bytes=2 * len(roots[0][2]) + len(module[2]))   # two roots a group
    # each group: some roots and the module they call; the module sent by the first group only
    assert len(split) == 3
    assert all(0 in g.members and "modules/pool" in g.dirs for g in split)
    assert [0 in g.extra for g in split] == [False, True, True]
    assert sorted(i for g in split for i in g.members if i not in g.extra) == list(range(7))
    # every root calls one large module (a module repository's examples): parsing it in each group
    # would cost more than the split saves, so the set stays whole
    large = ("modules/pool/main.tf", TF, module[2] * 40)
    assert [g.members for g in terraform_groups([large, *roots], max_bytes=2 * len(roots[0][2]) + len(large[2]))] \
        == [[0, 1, 2, 3, 4, 5, 6]]


POOL = ('variable "size" {\n  default = "p4d.24xlarge"\n}\n'
        'resource "aws_instance" "gpu" {\n  instance_type = var.size\n}\n'
        'resource "aws_s3_bucket" "ckpt" {\n  bucket = "ckpt-${var.size}"\n}\n')
ROOT = ('module "pool" {\n  source = %s\n  size   = var.size\n}\n'
        'variable "size" {\n  default = "%s"\n}\n'
        'resource "aws_s3_bucket" "logs" {\n  bucket = "logs-%d"\n}\n')
SIZES = ["p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "g6.12xlarge", "p4de.24xlarge"]
JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train-%d\nspec:\n  template:\n    spec:\n"
       "      containers:\n        - name: t\n          image: pytorch\n"
       "          resources:\n            limits:\n              nvidia.com/gpu: 8\n")


@pytest.fixture
def counted(monkeypatch) -> dict:
    """Parse workers for any tree; per run of this process: root modules
    evaluated here, and worker evaluations replayed here."""
    monkeypatch.setattr(parse_stage, "_PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(parse_stage, "_PARALLEL_MIN_BYTES", 0)
    counts = {"evaluated": 0, "replayed": 0}
    parent = os.getpid()
    real_run, real_lookup = tf_builder.ModuleInstance.run, WorkerRoots.lookup

    def run(self):
        if os.getpid() == parent and not self.prefix:      # a root module's instance, in this process
            counts["evaluated"] += 1
        return real_run(self)

    def lookup(self, key):
        counts["replayed"] += isinstance(key, tuple)
        return real_lookup(self, key)

    monkeypatch.setattr(tf_builder.ModuleInstance, "run", run)
    monkeypatch.setattr(WorkerRoots, "lookup", lookup)
    return counts


def _findings(root: Path, *, jobs: int, use_cache: bool = False) -> list:
    result = lint(["."], Settings(root=root),
                  LintOptions(jobs=jobs, cache_dir=root.parent / "cache", use_cache=use_cache))
    assert result.rule_failures == []
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]


def _terraform_findings(findings: list) -> list:
    return [(f[0], f[1]) for f in findings if f[1].endswith(".tf")]


def _project(tmp_path: Path, monkeypatch, source: str) -> Path:
    # roots larger than the module they share: split between groups, it is parsed again in each (cheap)
    files = {f"r{i}/main.tf": ROOT % (source, size, i) + "# " + "-" * 2000 + "\n" for i, size in enumerate(SIZES)}
    files["modules/pool/main.tf"] = POOL
    files.update({f"jobs/job{i}.yaml": JOB % i for i in range(8)})
    return cached_project(tmp_path, monkeypatch, files)


@pytest.mark.parametrize("use_cache", [False, True])
def test_a_cold_run_replays_the_roots_its_workers_evaluated(tmp_path: Path, monkeypatch, counted: dict,
                                                            use_cache: bool):
    root = _project(tmp_path, monkeypatch, '"../modules/pool"')
    serial = _findings(root, jobs=1)
    assert counted == {"evaluated": len(SIZES), "replayed": 0}
    counted.update(evaluated=0)
    made: list = []
    real_groups = worker_roots.terraform_groups
    monkeypatch.setattr(worker_roots, "terraform_groups", lambda *a, **k: made.extend(real_groups(*a, **k)) or made)
    assert _findings(root, jobs=2, use_cache=use_cache) == serial
    assert counted == {"evaluated": 0, "replayed": len(SIZES)}
    # this small project's roots are split between groups: the module they share is parsed in each
    assert len(made) > 1 and any(g.extra for g in made)
    assert _terraform_findings(serial) == [("MLC303", "modules/pool/main.tf")] + [
        ("MLC303", f"r{i}/main.tf") for i in range(len(SIZES))]
    if use_cache:
        # the replayed evaluations went to the root cache: a run after a change to one job file replays them
        (root / "jobs/job0.yaml").write_text(JOB % 0 + "# edited\n")
        counted.update(evaluated=0, replayed=0)
        assert _findings(root, jobs=2, use_cache=True) == serial
        assert counted["evaluated"] == 0


def test_a_call_the_pattern_misses_is_evaluated_by_the_parent(tmp_path: Path, monkeypatch, counted: dict):
    # `.\u002f` is "./" to HCL but not to the byte pattern: each root's group lacks the module
    # directory, the parent's call graph has it, and the parent evaluates every root itself
    # (its trees parsed again from the bytes: there is no cache)
    root = _project(tmp_path, monkeypatch, '"..\\u002fmodules/pool"')
    serial = _findings(root, jobs=1)
    counted.update(evaluated=0)
    assert _findings(root, jobs=2) == serial
    assert counted == {"evaluated": len(SIZES), "replayed": 0}
    assert ("MLC303", "modules/pool/main.tf") in _terraform_findings(serial)     # the call resolved


def test_a_worker_that_cannot_evaluate_leaves_the_roots_to_the_parent(tmp_path: Path, monkeypatch, counted: dict):
    root = _project(tmp_path, monkeypatch, '"../modules/pool"')
    serial = _findings(root, jobs=1)
    monkeypatch.setattr(worker_roots, "evaluate_group", lambda parsed, inputs: {})
    counted.update(evaluated=0)
    assert _findings(root, jobs=2) == serial
    assert counted == {"evaluated": len(SIZES), "replayed": 0}
