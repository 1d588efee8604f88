""".tf trees kept apart in the parse cache (mlcost_lint.cache_trees): a run
whose roots all come from the root cache loads no tree; a root that has to
be evaluated loads the trees (or parses the file again when a tree entry is
gone or damaged); the findings are always those of a run without a cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlc_testing import cached_project, printed_by_another_process
from mlcost_lint import cache_trees
from mlcost_lint.config import Settings
from mlcost_lint.pipeline import LintOptions, lint

POOL = ('variable "size" {\n  default = "p4d.24xlarge"\n}\n'
        'resource "aws_instance" "gpu" {\n  instance_type = var.size\n}\n'
        'resource "aws_s3_bucket" "scratch" {\n  bucket = "scratch-${var.size}"\n}\n')
ROOT = ('module "pool" {\n  source = "../modules/pool"\n  size   = var.size\n}\n'
        'variable "size" {\n  default = "p4d.24xlarge"\n}\n'
        'variable "token" {\n  sensitive = true\n}\n')
OTHER = 'resource "aws_s3_bucket" "logs" {\n  bucket = "logs"\n}\n'
JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers:\n"
       "        - name: c\n          image: x\n          resources: {limits: {nvidia.com/gpu: 1}}\n")


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    return cached_project(tmp_path, monkeypatch, {
        "live/main.tf": ROOT, "live/terraform.tfvars": 'token = "hunter2-very-secret-value"\n',
        "other/main.tf": OTHER, "modules/pool/main.tf": POOL, "k8s/job.yaml": JOB,
    })


@pytest.fixture
def loaded(monkeypatch) -> list:
    """How many trees each run loaded."""
    counts: list = []
    original = cache_trees.HclTrees.__call__

    def counting(self, parsed):
        counts.append(parsed.path)
        return original(self, parsed)

    monkeypatch.setattr(cache_trees.HclTrees, "__call__", counting)
    return counts


def _run(root: Path, use_cache: bool = True) -> tuple[list, frozenset]:
    result = lint(["."], Settings(root=root),
                  LintOptions(jobs=1, cache_dir=root.parent / "cache", use_cache=use_cache))
    assert result.rule_failures == []
    return [(f.code, f.location.path, f.location.line, f.message) for f in result.findings], result.secrets


def test_a_run_whose_roots_all_come_from_the_cache_loads_no_tree(project: Path, loaded: list):
    first = _run(project)
    assert loaded == []          # a cold run parses: the trees are in memory
    (project / "k8s" / "job.yaml").write_text(JOB + "# changed\n")
    again = _run(project)
    assert loaded == []          # every root from the root cache: no tree read
    assert again == _run(project, use_cache=False)
    assert first[0] == again[0]
    # the sensitive variable is known from the outline: its tfvars value is still a secret
    assert "hunter2-very-secret-value" in again[1]


def test_a_root_that_is_evaluated_again_loads_the_trees_it_reaches(project: Path, loaded: list):
    _run(project)
    (project / "other" / "main.tf").write_text(OTHER.replace('"logs"', '"logs-2"'))
    found = _run(project)
    # one changed file, parsed now; its root calls no module: no other tree is read
    assert loaded == []
    assert found == _run(project, use_cache=False)
    (project / "live" / "main.tf").write_text(ROOT.replace('default = "p4d.24xlarge"', 'default = "g5.xlarge"'))
    found = _run(project)
    # the root calls ../modules/pool: that tree is loaded, the unrelated root's is not
    assert loaded == ["modules/pool/main.tf"]
    assert found == _run(project, use_cache=False)


@pytest.mark.parametrize("damage", ["delete", "garbage"])
def test_a_missing_or_damaged_tree_entry_is_parsed_again(project: Path, loaded: list, damage: str):
    _run(project)
    cache = project.parent / "cache"
    trees = [p for p in cache.rglob("*.pkl") if p.read_bytes()[32:].find(b"HclBody") >= 0
             and p.read_bytes()[32:].find(b"ParsedFile") < 0]
    assert len(trees) == 3       # live, other and the module: one tree entry per .tf file
    for p in trees:
        if damage == "delete":
            p.unlink()
        else:
            p.write_bytes(b"\0" * 40)
    (project / "live" / "main.tf").write_text(ROOT + 'resource "aws_s3_bucket" "extra" {\n  bucket = "extra"\n}\n')
    found = _run(project)
    assert loaded == ["modules/pool/main.tf"]     # other/ comes from the root cache
    assert found == _run(project, use_cache=False)
    # the module's bucket (its tree parsed again) and the root's new one
    assert {f[:3] for f in found[0] if f[0] == "MLC303"} == {
        ("MLC303", "live/main.tf", 11), ("MLC303", "modules/pool/main.tf", 7), ("MLC303", "other/main.tf", 1)}


def test_parse_all_returns_whole_trees_from_the_cache(project: Path):
    """parse_all (bench/stages.py, the CLI's explicit-file check) has no tree
    loader: a cached .tf file comes back with its tree, as parsed."""
    from mlcost_lint.discover import discover
    from mlcost_lint.parse_stage import parse_all

    settings = Settings(root=project)
    files = [f for f in discover(["."], [], project).files if f.display.endswith(".tf")]
    options = LintOptions(jobs=1, cache_dir=project.parent / "cache")
    fresh = parse_all(files, settings, LintOptions(jobs=1, use_cache=False))
    parse_all(files, settings, options)
    again = parse_all(files, settings, options)
    assert [pf.path for pf in again] == ["live/main.tf", "modules/pool/main.tf", "other/main.tf"]
    assert again == fresh and all(pf.hcl is not None and pf.hcl_outline is None for pf in again)


def test_a_failed_preparation_is_reported_whichever_roots_come_from_the_cache(project: Path, monkeypatch):
    """Sources are prepared only when a root that reaches them is evaluated;
    the root reaching a source whose preparation failed is never cached, so
    the diagnostic is there, in the same place, in every cache state."""
    from mlcost_lint.model.terraform import declarations

    real = declarations.prepare

    def failing(source):
        if source.dir == "modules/pool":
            raise RecursionError
        return real(source)

    monkeypatch.setattr(declarations, "prepare", failing)
    cold = _run(project, use_cache=False)
    assert ("MLC001", "modules/pool", 1, "configuration nested too deeply to evaluate") in \
        [(c, p, line, m.split(": ", 1)[-1]) for c, p, line, m in cold[0]]
    assert _run(project) == cold                      # fills the caches
    (project / "other" / "main.tf").write_text(OTHER + "# changed\n")
    assert _run(project) == _run(project, use_cache=False)    # other/ evaluated, live/ again (never cached)
    (project / "k8s" / "job.yaml").write_text(JOB + "# changed\n")
    assert _run(project) == _run(project, use_cache=False)


def _meaning(text: str) -> str | None:
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.parse.document import FileKind

    parsed = parse_bytes(text.encode(), "modules/pool/main.tf", FileKind.TERRAFORM, max_depth=100)
    cache_trees.payloads(parsed)
    return parsed.meaning


@pytest.mark.parametrize("edit, same", [
    (lambda t: t + "# reviewed\n\n", True),                                     # lines added at the end
    (lambda t: t.replace('"p4d.24xlarge"', '"p4d.24xlarge" # the largest'), True),  # an end-of-line comment
    (lambda t: t.replace("  default", "  // why\n  default", 1), False),         # a line moved
    (lambda t: t.replace('"p4d.24xlarge"', '"p5.48xlarge"'), False),             # a value
    (lambda t: t.replace('"p4d.24xlarge"', '"token-9f8e7d6c5b4a39281706"'), False),  # a secret-looking value
    (lambda t: t + "resource {\n", False),                                       # a syntax error
])
def test_a_files_meaning_is_its_tree_not_its_bytes(edit, same):
    # ParsedFile.meaning: equal exactly when the model reads the same tree,
    # positions included (the incremental run then reads no Terraform).
    assert (_meaning(edit(POOL)) == _meaning(POOL)) is same


def test_a_files_meaning_is_the_same_in_another_process():
    # The hash of the pickled tree does not depend on the process (hash seed, history).
    code = ("from mlcost_lint import cache_trees; from mlcost_lint.parse import parse_bytes; "
            "from mlcost_lint.parse.document import FileKind; "
            f"p = parse_bytes({POOL.encode()!r}, 'modules/pool/main.tf', FileKind.TERRAFORM, max_depth=100); "
            "cache_trees.payloads(p); print(p.meaning)")
    assert printed_by_another_process(code) == _meaning(POOL)
