"""Roots the root cache misses, evaluated in forked workers before the
serial pass (model.terraform._Roots.prefetch): only when their trees are
still in the parse cache, and with the findings of a run without any cache
or with one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlc_testing import cached_project
from mlcost_lint import pipeline
from mlcost_lint.config import Settings
from mlcost_lint.model import terraform
from mlcost_lint.model.terraform import _Roots
from mlcost_lint.model.terraform import builder as tf_builder
from mlcost_lint.pipeline import LintOptions, lint

POOL = ('variable "size" {\n  default = "p4d.24xlarge"\n}\n'
        'resource "aws_instance" "gpu" {\n  instance_type = var.size\n}\n'
        'resource "aws_s3_bucket" "ckpt" {\n  bucket = "ckpt-${var.size}"\n}\n')
ROOT = ('module "pool" {\n  source = "../modules/pool"\n  size   = var.size\n}\n'
        'variable "size" {\n  default = "%s"\n}\n'
        'resource "aws_s3_bucket" "logs" {\n  bucket = "logs-%d"\n}\n')
SIZES = ["p4d.24xlarge", "p5.48xlarge", "g5.xlarge", "g6.12xlarge", "p4de.24xlarge"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    # these roots are small: prefetch whatever they read (the default waits for 100 files)
    monkeypatch.setattr(terraform, "_PREFETCH_MIN_FILES", 1)
    files = {f"r{i}/main.tf": ROOT % (size, i) for i, size in enumerate(SIZES)}
    files["modules/pool/main.tf"] = POOL
    return cached_project(tmp_path, monkeypatch, files)


@pytest.fixture
def runs(monkeypatch) -> list:
    """Per run: [RootCache, root modules evaluated in this process]."""
    made: list = []
    original_cache = pipeline._root_cache
    original_run = tf_builder.ModuleInstance.run

    def recording(*args, **kwargs):
        made.append([original_cache(*args, **kwargs), 0])
        return made[-1][0]

    def counting(self):
        if made and not self.prefix:     # a root module's instance (a module call has a prefix)
            made[-1][1] += 1
        return original_run(self)

    monkeypatch.setattr(pipeline, "_root_cache", recording)
    monkeypatch.setattr(tf_builder.ModuleInstance, "run", counting)
    return made


def _findings(root: Path, *, jobs: int = 2, use_cache: bool = True) -> list:
    result = lint(["."], Settings(root=root),
                  LintOptions(jobs=jobs, cache_dir=root.parent / "cache", use_cache=use_cache))
    assert result.rule_failures == []
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]


def test_a_changed_module_re_evaluates_every_root_in_workers(project: Path, runs: list):
    first = _findings(project)
    # a cold run holds the trees it parsed: every root evaluated here, none in a worker
    assert runs[-1][0].misses == len(SIZES) and runs[-1][1] == len(SIZES)
    pool = project / "modules/pool/main.tf"
    pool.write_text(POOL.replace('"ckpt"', '"checkpoints"'))
    after = _findings(project)
    # every root missed; workers evaluated and stored them, this process replayed them
    assert runs[-1][0].misses == len(SIZES) and runs[-1][0].hits == 0
    assert runs[-1][1] == 0
    assert after != first
    assert after == _findings(project, use_cache=False) == _findings(project, jobs=1, use_cache=False)
    assert any("aws_s3_bucket.checkpoints" in f[4] for f in after)
    # and the next run replays the workers' entries
    assert _findings(project) == after
    assert (runs[-1][0].hits, runs[-1][0].misses, runs[-1][1]) == (len(SIZES), 0, 0)


def test_one_process_few_files_or_trees_held_here_evaluate_here(project: Path, runs: list, monkeypatch):
    _findings(project)
    pool = project / "modules/pool/main.tf"
    pool.write_text(POOL.replace('"ckpt"', '"c1"'))
    _findings(project, jobs=1)
    assert runs[-1][1] == len(SIZES)
    # the two roots' own files were parsed in this run: most trees they read are here
    (project / "r0/main.tf").write_text(ROOT % ("g5.2xlarge", 0))
    (project / "r1/main.tf").write_text(ROOT % ("g5.4xlarge", 1))
    _findings(project)
    assert runs[-1][1] == 2
    # under _PREFETCH_MIN_FILES (5 roots read 10 files)
    monkeypatch.setattr(terraform, "_PREFETCH_MIN_FILES", 11)
    pool.write_text(POOL.replace('"ckpt"', '"c3"'))
    _findings(project)
    assert runs[-1][1] == len(SIZES)
    monkeypatch.setattr(terraform, "_PREFETCH_MIN_FILES", 10)
    pool.write_text(POOL.replace('"ckpt"', '"c4"'))
    _findings(project)
    assert runs[-1][1] == 0


def test_a_worker_that_fails_leaves_the_root_to_this_process(project: Path, runs: list, monkeypatch):
    _findings(project)
    (project / "modules/pool/main.tf").write_text(POOL.replace('"ckpt"', '"c2"'))
    expected = _findings(project, use_cache=False)

    def broken(self, d):
        raise RuntimeError("worker bug")

    monkeypatch.setattr(_Roots, "evaluate_alone", broken)
    assert _findings(project) == expected
    assert runs[-1][1] == len(SIZES)


def test_no_fork_beside_another_thread(project: Path, runs: list):
    import threading

    _findings(project)
    (project / "modules/pool/main.tf").write_text(POOL.replace('"ckpt"', '"c5"'))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        _findings(project)
    finally:
        stop.set()
        other.join()
    assert runs[-1][1] == len(SIZES)


def test_terraform_waits_for_the_parse_workers_then_prefetches(project: Path, runs: list):
    # enough changed files for a parse pool (parse_stage._parallel): Terraform,
    # whose roots workers will evaluate, starts only once that pool is gone
    from mlcost_lint import parse_stage

    padding = "# " + "x" * 78 + "\n"
    names = [f"configs/c{i}.yaml" for i in range(parse_stage._PARALLEL_MIN_FILES + 6)]
    for n, name in enumerate(names):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(f"learning_rate: 0.{n + 1}\n" + padding * 150)
    _findings(project)
    (project / "modules/pool/main.tf").write_text(POOL.replace('"ckpt"', '"c6"'))
    for n, name in enumerate(names):
        (project / name).write_text(f"learning_rate: 0.{n + 2}\n" + padding * 150)
    after = _findings(project)
    assert runs[-1][1] == 0
    assert after == _findings(project, use_cache=False)
