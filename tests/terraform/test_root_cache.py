"""Evaluated Terraform roots from the cache (model.terraform.root_cache):
an unchanged root is replayed, a root that read a changed file (its own,
a module's, a tfvars, a --var-file) is evaluated again, and the findings
are always those of a run without any cache."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from mlc_testing import cached_project
from mlcost_lint import pipeline
from mlcost_lint.cache import load_payload
from mlcost_lint.config import Settings
from mlcost_lint.pipeline import LintOptions, lint

GPU_POOL = ('variable "size" {\n  default = "p4d.24xlarge"\n}\n'
            'resource "aws_instance" "gpu" {\n  instance_type = var.size\n}\n')
ROOT_A = ('module "pool" {\n  source = "../modules/pool"\n  size   = var.size\n}\n'
          'module "off" {\n  source = "../modules/off"\n  count  = 0\n}\n'
          'variable "size" {\n  default = "p4d.24xlarge"\n}\n')
ROOT_B = ('resource "aws_instance" "b" {\n  instance_type = "p5.48xlarge"\n}\n'
          'resource "aws_s3_bucket" "logs" {\n  bucket = "logs"\n}\n')
OFF = 'resource "aws_instance" "never" {\n  instance_type = "p5.48xlarge"\n}\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    return cached_project(tmp_path, monkeypatch, {
        "a/main.tf": ROOT_A, "a/terraform.tfvars": 'size = "p4d.24xlarge"\n', "b/main.tf": ROOT_B,
        "modules/pool/main.tf": GPU_POOL, "modules/off/main.tf": OFF,
    })


@pytest.fixture
def caches(monkeypatch) -> list:
    """The RootCache of each run, to read its hits and misses."""
    made: list = []
    original = pipeline._root_cache

    def recording(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(pipeline, "_root_cache", recording)
    return made


def _findings(root: Path, *, settings: Settings | None = None, use_cache: bool = True, **options) -> list:
    result = lint(["."], settings or Settings(root=root),
                  LintOptions(jobs=1, cache_dir=root.parent / "cache", use_cache=use_cache, **options))
    assert result.rule_failures == []
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]


def _uncached(root: Path, **kwargs) -> list:
    return _findings(root, use_cache=False, **kwargs)


def test_unchanged_roots_are_replayed_with_the_same_findings(project: Path, caches: list):
    first = _findings(project)
    assert (caches[-1].hits, caches[-1].misses) == (0, 2)
    again = _findings(project)
    assert (caches[-1].hits, caches[-1].misses) == (2, 0)
    assert again == first == _uncached(project)
    assert ("MLC303", "b/main.tf", 4) in [f[:3] for f in first]


@pytest.mark.parametrize("changed", ["modules/pool/main.tf", "a/terraform.tfvars", "a/main.tf",
                                     # called with count = 0: no instance reads it, the call still names it
                                     "modules/off/main.tf"])
def test_a_change_to_what_one_root_read_re_evaluates_that_root_only(project: Path, caches: list, changed: str):
    _findings(project)
    path = project / changed
    if changed.endswith(".tfvars"):
        path.write_text('size = "g5.xlarge"\n')
    else:
        # a value (a comment alone is no change to a root: test_a_root_is_keyed_by_its_files_meaning...)
        path.write_text(path.read_text().replace("p4d.24xlarge", "g5.xlarge").replace("p5.48xlarge", "g5.xlarge")
                        + "# edited\n")
    after = _findings(project)
    assert (caches[-1].hits, caches[-1].misses) == (1, 1)    # b replayed, a evaluated
    assert after == _uncached(project)


@pytest.mark.parametrize("edit, evaluated", [
    (lambda t: t + "# reviewed\n", 0),                                          # a comment added at the end
    (lambda t: t.replace('"p4d.24xlarge"\n}', '"p4d.24xlarge" # the largest\n}', 1), 0),  # at a line's end
    (lambda t: "# the pool\n" + t, 1),                                           # a comment that moves lines
])
def test_a_root_is_keyed_by_its_files_meaning_not_their_bytes(project: Path, caches: list, edit, evaluated):
    # A comment that moves no line leaves the tree (ParsedFile.meaning) as it
    # was: the root that reads the file is replayed; one that moves lines
    # moves locations, and the root is evaluated again.
    _findings(project)
    path = project / "modules/pool/main.tf"
    path.write_text(edit(path.read_text()))
    after = _findings(project)
    assert (caches[-1].hits, caches[-1].misses) == (2 - evaluated, evaluated)
    assert after == _uncached(project)


def test_a_module_directory_that_appears_is_read_by_the_root_that_names_it(project: Path, caches: list):
    (project / "a/later.tf").write_text('module "later" {\n  source = "../modules/later"\n}\n')
    _findings(project)      # modules/later is not there: its outputs are unknown
    _findings(project)
    assert (caches[-1].hits, caches[-1].misses) == (2, 0)
    (project / "modules/later").mkdir()
    (project / "modules/later/main.tf").write_text('resource "aws_s3_bucket" "late" {\n  bucket = "late"\n}\n')
    after = _findings(project)
    assert (caches[-1].hits, caches[-1].misses) == (1, 1)
    assert after == _uncached(project)
    assert [f[:3] for f in after if f[1] == "modules/later/main.tf"] == [("MLC303", "modules/later/main.tf", 1)]


def test_var_files_and_cli_vars_are_part_of_every_root(project: Path, caches: list):
    (project / "extra.tfvars").write_text('size = "g5.xlarge"\n')
    _findings(project)
    with_vars = _findings(project, var_files=["extra.tfvars"], cli_vars={"size": "p5.48xlarge"})
    assert (caches[-1].hits, caches[-1].misses) == (0, 2)
    assert with_vars == _uncached(project, var_files=["extra.tfvars"], cli_vars={"size": "p5.48xlarge"})


def test_the_step_budget_runs_out_at_the_same_root_with_the_cache(project: Path, caches: list):
    """Roots share max-evaluation-steps in order: a replayed root is charged
    the steps it took, and the root that ran out is never stored."""
    # each local stays under the per-value limit (a twentieth), all of them exceed the whole
    spend = "".join(f"  l{i} = [for j in range(200) : j]\n" for i in range(40))
    (project / "b/main.tf").write_text(ROOT_B + "locals {\n" + spend + "}\n")
    settings = Settings(root=project, max_evaluation_steps=5000)
    cold = _uncached(project, settings=settings)
    assert any("stopped after 5000 steps" in f[4] for f in cold), cold
    assert _findings(project, settings=settings) == cold
    assert (caches[-1].hits, caches[-1].misses) == (0, 2)
    assert _findings(project, settings=settings) == cold
    assert (caches[-1].hits, caches[-1].misses) == (1, 1)    # a replayed, b evaluated again


def test_a_changed_setting_misses_every_root(project: Path, caches: list):
    _findings(project)
    _findings(project, settings=Settings(root=project, required_tags=["team"]))
    assert (caches[-1].hits, caches[-1].misses) == (0, 2)


def test_entries_hold_unknown_as_the_singleton_and_nothing_callable():
    from mlcost_lint.model.core import UNKNOWN

    assert load_payload(pickle.dumps([UNKNOWN], protocol=5))[0] is UNKNOWN
    # a module-level object other than the UNKNOWN singleton is refused
    payload = pickle.dumps([pipeline.lint], protocol=5)
    with pytest.raises(pickle.UnpicklingError):
        load_payload(payload)


def test_a_root_evaluated_after_replayed_ones_still_reads_its_tfvars(tmp_path: Path, monkeypatch):
    # Roots replayed from the cache are charged their steps; a root evaluated
    # after them (its file changed) must still get its tfvars values. Each
    # value has a twentieth of the budget: here 1,000 steps, fewer than the
    # replayed roots "a" and "b" cost, which all counted against the first
    # tfvars value of "z" (the region then came out unknown).
    heavy = 'locals {\n  xs = [for i in range(700) : i * 2]\n}\nresource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n'
    root = cached_project(tmp_path, monkeypatch, {
        "a/main.tf": heavy, "b/main.tf": heavy,
        "z/main.tf": 'provider "aws" {\n  region = var.region\n}\nvariable "region" {\n  default = "eu-west-1"\n}\n'
                     'resource "aws_instance" "gpu" {\n  instance_type = "p4d.24xlarge"\n}\n',
        "z/terraform.tfvars": 'region = "us-east-1"\n',
    })
    settings = Settings(root=root, max_evaluation_steps=20_000)

    def regions(use_cache: bool) -> dict:
        result = lint(["."], settings, LintOptions(jobs=1, cache_dir=root.parent / "cache", use_cache=use_cache))
        return {r.address: r.region for r in result.project.terraform.resources if r.type == "aws_instance"}

    assert regions(True) == {"aws_instance.gpu": "us-east-1"}
    main = root / "z" / "main.tf"
    main.write_text(main.read_text().replace("p4d.24xlarge", "p5.48xlarge"))
    assert regions(True) == regions(False) == {"aws_instance.gpu": "us-east-1"}
