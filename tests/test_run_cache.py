"""The run cache (mlcost_lint.run_cache): a warm run over an unchanged tree
takes the whole outcome from one entry, and any change to what the run
read (a file, the config, the price file, --var-file, --var, the paths,
the tool's own code) is a miss that recomputes everything."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from mlc_testing import cached_project, run_cli

from mlcost_lint.config import Settings
from mlcost_lint.pipeline import LintOptions, lint

JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: ghcr.io/acme/train:1
        command: ["python", "train.py", "--config", "/configs/sft.yaml"]
        resources: {limits: {nvidia.com/gpu: 8}}
"""
SFT = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: /ckpt\nsave_strategy: steps\nsave_steps: 10\n"
TF = ('variable "size" {\n  default = "p4d.24xlarge"\n}\n'
      'resource "aws_instance" "gpu" {\n  instance_type = var.size\n}\n')


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    return cached_project(tmp_path, monkeypatch, {
        "k8s/job.yaml": JOB, "configs/sft.yaml": SFT, "infra/main.tf": TF,
    })


def _lint(root: Path, paths: list[str] | None = None, settings: Settings | None = None, **options):
    settings = settings or Settings(root=root)
    return lint(paths or ["."], settings, LintOptions(jobs=1, cache_dir=root.parent / "cache", reuse_run=True,
                                                      **options))


def _seen(result) -> list[tuple]:
    return [(f.code, f.location.path, f.location.line, f.message) for f in result.findings]


def test_an_unchanged_tree_is_one_hit_with_the_same_findings(project: Path):
    cold = _lint(project)
    warm = _lint(project)
    assert (cold.from_run_cache, warm.from_run_cache) == (False, True)
    assert cold.project is not None and warm.project is None     # no model was built
    assert _seen(warm) == _seen(cold) and _seen(cold)
    assert [f.cost for f in warm.findings] == [f.cost for f in cold.findings]
    assert warm.read_as == cold.read_as and warm.secrets == cold.secrets
    uncached = lint(["."], Settings(root=project), LintOptions(use_cache=False))
    assert _seen(uncached) == _seen(cold)


@pytest.mark.parametrize("change", [
    "edit a file", "add a file", "remove a file", "config", "price discount", "paths", "code",
])
def test_every_input_change_is_a_miss(project: Path, change: str, monkeypatch):
    _lint(project)
    settings, paths = Settings(root=project), None
    if change == "edit a file":
        (project / "configs/sft.yaml").write_text(SFT + "save_total_limit: 2\n")
    elif change == "add a file":
        (project / "k8s/job2.yaml").write_text(JOB.replace("name: train", "name: train2"))
    elif change == "remove a file":
        (project / "infra/main.tf").unlink()
    elif change == "config":
        settings = Settings(root=project, ignore=["MLC301"])
    elif change == "price discount":
        settings = Settings(root=project, prices_discount=0.3)
    elif change == "paths":
        paths = ["k8s", "configs", "infra"]
    else:
        from mlcost_lint import run_cache

        run_cache.package_fingerprint.cache_clear()
        monkeypatch.setattr(run_cache, "package_fingerprint", lambda: "another build of the tool")
    again = _lint(project, paths, settings)
    assert again.from_run_cache is False
    fresh = lint(paths or ["."], settings, LintOptions(use_cache=False))
    assert _seen(again) == _seen(fresh)


def test_the_package_fingerprint_moves_with_any_write_to_a_package_file(tmp_path: Path):
    """The fingerprint reads stat stamps, not bytes: a rewrite of the same
    size with its mtime put back still changes it (ctime moves), bytecode
    does not count, and a new or removed file does."""
    import os
    import time

    from mlcost_lint.fingerprint import tree_fingerprint

    pkg = tmp_path / "pkg"
    (pkg / "rules" / "__pycache__").mkdir(parents=True)
    rule = pkg / "rules" / "a.py"
    rule.write_text("LIMIT = 1\n")
    (pkg / "table.json").write_text("{}")
    before = tree_fingerprint([str(pkg)])
    assert tree_fingerprint([str(pkg)]) == before
    (pkg / "rules" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"x")
    assert tree_fingerprint([str(pkg)]) == before
    st = rule.stat()
    time.sleep(0.01)
    rule.write_text("LIMIT = 2\n")
    os.utime(rule, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert rule.stat().st_size == st.st_size and rule.stat().st_mtime_ns == st.st_mtime_ns
    edited = tree_fingerprint([str(pkg)])
    assert edited != before
    (pkg / "rules" / "b.py").write_text("")
    added = tree_fingerprint([str(pkg)])
    assert added not in (before, edited)
    (pkg / "rules" / "b.py").unlink()
    assert tree_fingerprint([str(pkg)]) == edited


def test_var_files_and_cli_vars_are_part_of_the_key(project: Path):
    (project / "small.tfvars").write_text('size = "g5.xlarge"\n')
    first = _lint(project, var_files=["small.tfvars"])
    assert _lint(project, var_files=["small.tfvars"]).from_run_cache is True
    (project / "small.tfvars").write_text('size = "p5.48xlarge"\n')
    assert _lint(project, var_files=["small.tfvars"]).from_run_cache is False
    assert _lint(project, var_files=["small.tfvars"], cli_vars={"size": "g5.xlarge"}).from_run_cache is False
    assert _lint(project, var_files=["small.tfvars"], cli_vars={"size": "g5.xlarge"}).from_run_cache is True
    assert first.from_run_cache is False


def test_a_price_file_is_keyed_by_its_content(project: Path, tmp_path: Path):
    from mlcost_lint import run_cache

    prices = tmp_path / "prices.csv"
    prices.write_text("a\n")
    settings = Settings(root=project, prices_file=prices)
    before = run_cache.settings_fingerprint(settings)
    prices.write_text("b\n")
    assert run_cache.settings_fingerprint(settings) != before
    # Where a setting came from (--show-settings) changes no finding.
    assert run_cache.settings_fingerprint(Settings(root=project, origins={"select": "cli"})) == \
        run_cache.settings_fingerprint(Settings(root=project))


def test_a_tampered_or_forged_run_entry_is_a_miss(project: Path):
    cold = _lint(project)
    entries = [p for p in (project.parent / "cache").rglob("*.pkl") if p.parent.name.startswith("r")]
    assert len(entries) == 1
    entry = entries[0]
    data = entry.read_bytes()
    entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))       # one bit flipped
    again = _lint(project)
    assert (again.from_run_cache, _seen(again)) == (False, _seen(cold))

    class Boom:
        def __reduce__(self):
            return (print, ("code ran",))

    # Even with a valid signature (the key file is the user's own), an entry
    # that names a callable is refused by the unpickler.
    from mlcost_lint.cache import load_payload

    with pytest.raises(pickle.UnpicklingError):
        load_payload(pickle.dumps(Boom()))
    assert _lint(project).from_run_cache is True


def test_runs_with_an_internal_error_are_not_stored(project: Path, monkeypatch):
    from mlcost_lint.rules.storage import mlc301_no_checkpoint_cleanup as mlc301

    rule = next(v for v in vars(mlc301).values() if getattr(v, "code", None) == "MLC301")

    def boom(self, project):
        raise RuntimeError("a rule bug")

    monkeypatch.setattr(rule, "check", boom)
    broken = _lint(project)
    assert broken.rule_failures and broken.from_run_cache is False
    assert _lint(project).from_run_cache is False    # nothing was stored to replay


def test_cli_output_is_the_same_cold_and_warm_and_verbose_rebuilds_the_model(project: Path):
    cache = str(project.parent / "cli-cache")
    for fmt in ("text", "full", "json", "sarif", "github", "junit"):
        cold = run_cli(".", "--format", fmt, "--no-cache", cwd=project)
        first = run_cli(".", "--format", fmt, "--cache-dir", cache, cwd=project)
        warm = run_cli(".", "--format", fmt, "--cache-dir", cache, cwd=project)
        assert (first.code, first.out, first.err) == (cold.code, cold.out, cold.err), fmt
        assert (warm.code, warm.out, warm.err) == (cold.code, cold.out, cold.err), fmt
    assert "[*] 1 fixable" in run_cli(".", "--cache-dir", cache, cwd=project).out
    verbose = run_cli(".", "-v", "--cache-dir", cache, cwd=project)
    assert "mlcost-lint: workload" in verbose.err or "Kubernetes: Job" in verbose.err
    assert verbose.err == run_cli(".", "-v", "--no-cache", cwd=project).err


def test_explicit_files_with_project_context_keep_their_own_entry(project: Path):
    """The pre-commit shape reads the whole project but keeps only findings in
    the given files (priced, redacted and suppressed only there): its entry
    must not be the full run's, nor the other way round."""
    (project / ".git").mkdir()
    cache = str(project.parent / "cli-cache")
    full_cold = run_cli(".", "--format", "json", "--no-cache", cwd=project)
    hook_cold = run_cli("k8s/job.yaml", "--format", "json", "--no-cache", cwd=project)
    assert json.loads(full_cold.out)["findings"] != json.loads(hook_cold.out)["findings"]
    assert {f["path"] for f in json.loads(hook_cold.out)["findings"]} == {"k8s/job.yaml"}
    for _ in range(2):   # fill, then from the run cache
        for args, cold in (((".",), full_cold), (("k8s/job.yaml",), hook_cold)):
            r = run_cli(*args, "--format", "json", "--cache-dir", cache, cwd=project)
            assert (r.code, r.out, r.err) == (cold.code, cold.out, cold.err), args


def test_the_outcome_keeps_a_plain_file_as_its_path_and_kind(project: Path):
    """A file with no suppression, error or skip reason is stored as (path,
    kind) (run_cache.outcome_files) and loads back as a light ParsedFile; a
    file with a suppression keeps it, and its comment lines, through a warm
    run and an incremental one."""
    from mlcost_lint import run_cache
    from mlcost_lint.cache import ParseCache
    from mlcost_lint.parse.document import FileKind, ParsedFile

    (project / "configs" / "sft.yaml").write_text("# mlcost-lint: ignore\n# why: a test\n" + SFT)
    cold = _lint(project)
    stored = run_cache.outcome_files(cold.files)
    assert sorted(item for item in stored if isinstance(item, tuple)) == [
        ("infra/main.tf", FileKind.TERRAFORM), ("k8s/job.yaml", FileKind.YAML)]
    [kept] = [item for item in stored if isinstance(item, ParsedFile)]
    assert kept.path == "configs/sft.yaml" and kept.suppressions and kept.comment_lines == frozenset({1, 2})
    assert kept.documents == [] and kept.model is None

    warm = _lint(project)
    assert warm.from_run_cache is True and _seen(warm) == _seen(cold)
    assert [(pf.path, pf.kind, pf.suppressions, pf.errors) for pf in warm.files] \
        == [(pf.path, pf.kind, pf.suppressions, pf.errors) for pf in cold.files]
    job = project / "k8s" / "job.yaml"
    job.write_text(job.read_text() + "# a comment\n")
    touched = _lint(project)
    assert touched.from_run_cache is False and _seen(touched) == _seen(cold)
    assert [len(pf.suppressions) for pf in touched.files] == [len(pf.suppressions) for pf in cold.files]

    # a stored item that is neither is a miss, not a crash
    cache = ParseCache.__new__(ParseCache)
    cache.get = lambda key: run_cache.CachedRun([], [], set(), {}, [("a.yaml", "yaml")], frozenset())
    assert run_cache.load(cache, "r0") is None
    cache.get = lambda key: run_cache.CachedRun([], [], set(), {}, [("a.yaml", FileKind.YAML)], frozenset())
    assert [(pf.path, pf.kind) for pf in run_cache.load(cache, "r0").files] == [("a.yaml", FileKind.YAML)]
