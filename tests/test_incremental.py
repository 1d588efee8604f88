"""A whole run after a few files changed takes the findings of the files
the change cannot reach from the last whole run (mlcost_lint.incremental),
and reports exactly what a run with no cache reports; when it cannot know
that, it reads the whole project."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import FIXTURES

from mlcost_lint.config import Settings
from mlcost_lint.pipeline import LintOptions, lint

_PROJECTS = ("demo", "link", "training", "rules", "managed")


def _lint(root: Path, cache: Path | None, **options):
    old = os.getcwd()
    os.chdir(root)
    try:
        return lint(["."], Settings(root=root, select=["ALL"]),
                    LintOptions(cache_dir=cache, use_cache=cache is not None, jobs=1, reuse_run=True, **options))
    finally:
        os.chdir(old)


def _incremental(result) -> bool:
    # a merged run has no whole model, and did not come from the run cache
    return result.project is None and not result.from_run_cache


def _outcome(result) -> tuple:
    def key(f) -> tuple:
        cost = None if f.cost is None else (f.cost.known, f.cost.monthly() if f.cost.known else None)
        return (f.code, f.location.path, f.location.line, f.location.column, f.message, f.address, cost)

    fixes = sorted((key(f), repr(fix)) for f in result.findings for fix in [result.fixes.get(id(f))] if fix)
    # findings in location order, as the reporters print them (suppress.finish_unused sorts them)
    return (sorted(key(f) for f in result.findings), sorted(key(f) for f in result.suppressed),
            [(pf.path, [s.line for s in pf.suppressions], [e.message for e in pf.errors]) for pf in result.files],
            result.read_as, sorted(result.secrets), fixes)


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns(".mlcost_lint_cache"))
    return root


def _change_a_value(path: Path) -> bool:
    """One digit of the first line with a digit, not a comment: a real edit
    (a GPU count, a size, a step count)."""
    lines = path.read_text().split("\n")
    for n, line in enumerate(lines):
        m = re.search(r"\d", line)
        if m and not line.lstrip().startswith("#"):
            digit = "7" if line[m.start()] != "7" else "3"
            lines[n] = line[:m.start()] + digit + line[m.start() + 1:]
            path.write_text("\n".join(lines))
            return True
    return False


@pytest.mark.parametrize("name", _PROJECTS)
def test_each_edit_equals_a_run_without_cache(name, tmp_path):
    # Edits pile up file by file (values and comments, configs, workloads,
    # scripts): every run with the cache reports what a run without it
    # reports, and most are incremental.
    root = _copy(name, tmp_path)
    cache = tmp_path / "cache"
    _lint(root, cache)
    paths = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".sh", ".sbatch", ".json")
                   and p.is_file())
    incremental = 0
    for i, path in enumerate(paths):
        if i % 2:
            path.write_bytes(path.read_bytes().rstrip(b"\n") + f"\n# edit {i}\n".encode())
        elif not _change_a_value(path):
            continue
        cached = _lint(root, cache)
        assert _outcome(cached) == _outcome(_lint(root, None)), path
        incremental += _incremental(cached)
    assert incremental >= len(paths) // 3, (incremental, len(paths))


def _demo(tmp_path: Path):
    root = _copy("demo", tmp_path)
    cache = tmp_path / "cache"
    _lint(root, cache)
    return root, cache


def _replace(path: Path, old: str, new: str, count: int = -1) -> None:
    """Edit ``path``; ``old`` must be in it."""
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count))


def _append(path: Path, line: str) -> None:
    path.write_bytes(path.read_bytes() + f"\n{line}\n".encode())


def _cached_run(root: Path, cache: Path, *, incremental: bool | None):
    """A run with the cache, which reports what a run without it reports;
    ``incremental``: whether it must have been an incremental run."""
    cached = _lint(root, cache)
    if incremental is not None:
        assert _incremental(cached) is incremental
    assert _outcome(cached) == _outcome(_lint(root, None))
    return cached


def test_a_terraform_comment_keeps_the_run_incremental(tmp_path):
    # The Terraform summary (pools, buckets, their locations, its secrets) is
    # as it was: the other files' findings are the last run's.
    root, cache = _demo(tmp_path)
    _append(next(root.glob("infra/*.tf")), "# reviewed")
    _cached_run(root, cache, incremental=True)


def _calls(monkeypatch, name: str) -> list:
    """Each call of ``mlcost_lint.pipeline.<name>`` from now on, an item."""
    from mlcost_lint import pipeline

    calls: list = []
    real = getattr(pipeline, name)
    monkeypatch.setattr(pipeline, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def _terraform_evaluations(monkeypatch) -> list:
    """Each time a run evaluates Terraform (asks for the root cache), an item."""
    return _calls(monkeypatch, "_root_cache")


def test_a_terraform_comment_is_read_for_suppression_only(tmp_path, monkeypatch):
    # A comment appended, or one at the end of a line, leaves the .tf file's
    # tree as it was (ParsedFile.meaning): the run evaluates no Terraform and
    # reads the file's comments. A suppression added that way takes effect.
    root, cache = _demo(tmp_path)
    evaluations = _terraform_evaluations(monkeypatch)
    eks = root / "infra" / "eks.tf"
    _append(eks, "# reviewed")
    _cached_run(root, cache, incremental=True)
    _replace(eks, "min_size     = var.gpu_min_nodes", "min_size     = var.gpu_min_nodes  # mlcost-lint: ignore[MLC203]")
    cached = _cached_run(root, cache, incremental=True)
    assert evaluations == []
    assert [(f.code, f.location.line) for f in cached.suppressed if f.location.path == "infra/eks.tf"] \
        == [("MLC203", 39)]
    assert ("MLC203", "infra/eks.tf") not in {(f.code, f.location.path) for f in cached.findings}


def test_comments_alone_recompute_nothing_and_load_no_terraform_summary(tmp_path, monkeypatch):
    # Every changed file means what it meant (comments appended to YAML and
    # .tf files): no finding is recomputed, so the summary kept of the
    # Terraform is not loaded, only found to be kept. A changed value in a
    # file whose findings read Terraform loads it (its slice reads it).
    from mlcost_lint import project_slice

    root, cache = _demo(tmp_path)
    loaded: list[str] = []
    real = project_slice.load_summary
    monkeypatch.setattr(project_slice, "load_summary", lambda c, key: loaded.append(key) or real(c, key))
    for path in ("infra/eks.tf", "k8s/dev-box.yaml", "configs/lora.yml"):
        _append(root / path, "# reviewed")
    _cached_run(root, cache, incremental=True)
    assert loaded == []
    assert _change_a_value(root / "k8s" / "dev-box.yaml")
    _cached_run(root, cache, incremental=True)
    assert len(loaded) == 1


def test_a_hook_after_a_terraform_comment_reads_no_terraform(tmp_path, monkeypatch):
    # The first hook after a pull that changed only comments in Terraform
    # takes the Terraform side from the summary of its meaning, and the
    # whole run after the hook stays incremental.
    root, cache = _demo(tmp_path)
    evaluations = _terraform_evaluations(monkeypatch)
    _append(root / "infra" / "eks.tf", "# reviewed")
    _append(root / "k8s" / "dev-box.yaml", "# a hook")
    hooked = _lint(root, cache, report_paths=frozenset({"k8s/dev-box.yaml"}))
    assert len(hooked.files) < 21 and evaluations == []
    whole = _lint(root, None)
    assert [(f.code, f.location.line, f.message) for f in hooked.findings] == \
        [(f.code, f.location.line, f.message) for f in whole.findings if f.location.path == "k8s/dev-box.yaml"] != []
    _cached_run(root, cache, incremental=True)
    assert evaluations == []


def test_a_hook_after_terraform_is_restored_takes_the_summary_kept_of_it(tmp_path, monkeypatch):
    # A value edited and a run, then the file as it was (a branch switched
    # back): the Terraform is one the first run kept a summary of, found by
    # the files' meaning, so the hook evaluates no Terraform.
    root, cache = _demo(tmp_path)
    logs = root / "infra" / "logs.tf"
    original = logs.read_bytes()
    _replace(logs, "retention_in_days = 0", "retention_in_days = 30")
    _lint(root, cache)
    logs.write_bytes(original)
    evaluations = _terraform_evaluations(monkeypatch)
    _append(root / "k8s" / "dev-box.yaml", "# a hook")
    hooked = _lint(root, cache, report_paths=frozenset({"k8s/dev-box.yaml"}))
    assert len(hooked.files) < 21 and evaluations == []
    whole = _lint(root, None)
    assert [(f.code, f.location.line, f.message) for f in hooked.findings] == \
        [(f.code, f.location.line, f.message) for f in whole.findings if f.location.path == "k8s/dev-box.yaml"]


def test_a_terraform_comment_that_moves_lines_is_read(tmp_path, monkeypatch):
    # A comment line inside the file moves every line below it: Terraform is
    # read again and the findings below move with it.
    root, cache = _demo(tmp_path)
    evaluations = _terraform_evaluations(monkeypatch)
    _replace(root / "infra" / "eks.tf", "  scaling_config {", "  # two nodes stay warm\n  scaling_config {", 1)
    cached = _cached_run(root, cache, incremental=None)
    assert evaluations
    assert ("MLC203", "infra/eks.tf", 40) in {(f.code, f.location.path, f.location.line) for f in cached.findings}


def test_a_terraform_value_outside_the_summary_is_recomputed_incrementally(tmp_path):
    # A log group's retention: no link reads log groups, so the summary is as
    # it was and the run stays incremental, but the Terraform-located
    # findings are recomputed (MLC401 at the log group goes away).
    root, cache = _demo(tmp_path)
    before = _lint(root, None)
    assert ("MLC401", "infra/logs.tf", 8) in {(f.code, f.location.path, f.location.line) for f in before.findings}
    _replace(root / "infra" / "logs.tf", "retention_in_days = 0", "retention_in_days = 30")
    cached = _cached_run(root, cache, incremental=True)
    assert ("MLC401", "infra/logs.tf", 8) not in {(f.code, f.location.path, f.location.line) for f in cached.findings}


def test_a_changed_node_pool_reads_the_whole_project(tmp_path):
    root, cache = _demo(tmp_path)
    _replace(root / "infra" / "variables.tf", '"p4d.24xlarge"', '"p5.48xlarge"')
    _cached_run(root, cache, incremental=False)


def test_a_changed_file_that_shapes_others_reads_the_whole_project(tmp_path):
    # A ParallelCluster config: Slurm jobs take their GPUs from its queues.
    root, cache = _demo(tmp_path)
    _replace(root / "infra" / "pcluster-config.yaml", "MinCount: 1", "MinCount: 0", 1)
    _cached_run(root, cache, incremental=False)


def _analyses(monkeypatch) -> list:
    """Each time a run builds a model (of a slice or of the whole project), an item."""
    return _calls(monkeypatch, "finish_model")


def test_a_comment_in_a_file_that_shapes_others_recomputes_nothing(tmp_path, monkeypatch):
    # A ParallelCluster config means what it meant (cache_trees.document_meaning):
    # no finding can change, so the run reads no file and takes every finding
    # from the last run. A suppression added at a line's end takes effect.
    root, cache = _demo(tmp_path)
    pcluster = root / "infra" / "pcluster-config.yaml"
    analyses = _analyses(monkeypatch)

    def run_reading_nothing():
        cached = _lint(root, cache)
        assert _incremental(cached) and analyses == []
        assert _outcome(cached) == _outcome(_lint(root, None))
        analyses.clear()
        return cached

    _append(pcluster, "# reviewed")
    run_reading_nothing()
    _replace(pcluster, "MinCount: 1", "MinCount: 1  # mlcost-lint: ignore[MLC203]", 1)
    cached = run_reading_nothing()
    assert [(f.code, f.location.line) for f in cached.suppressed] == [("MLC203", 26)]


def test_a_comment_that_moves_lines_in_a_file_that_shapes_others_reads_the_whole_project(tmp_path):
    root, cache = _demo(tmp_path)
    _replace(root / "infra" / "pcluster-config.yaml", "  SlurmQueues:", "  # queues\n  SlurmQueues:", 1)
    cached = _cached_run(root, cache, incremental=False)
    assert ("MLC203", "infra/pcluster-config.yaml", 27) in \
        {(f.code, f.location.path, f.location.line) for f in cached.findings}


def test_a_file_whose_comments_changed_is_rekeyed_in_the_index(tmp_path, monkeypatch):
    # The index takes the new content's key with the meaning it had: the next
    # run does not parse the file again to compare it.
    from mlcost_lint import slice_plan

    root, cache = _demo(tmp_path)
    _append(root / "infra" / "pcluster-config.yaml", "# reviewed")
    _cached_run(root, cache, incremental=True)
    reads: list = []
    real = slice_plan._parse_inputs
    monkeypatch.setattr(slice_plan, "_parse_inputs",
                        lambda read, *a, **k: reads.append([i.source.display for i in read]) or real(read, *a, **k))
    assert _change_a_value(root / "configs" / "lora.yml")
    _cached_run(root, cache, incremental=True)
    assert reads[0] == ["configs/lora.yml"]     # the files changed since the index, compared first


def test_files_whose_comments_changed_are_parsed_for_their_meaning_only(tmp_path, monkeypatch):
    # Their model is the one the last run read: it is not read again (the
    # run that models the file later reads it, from the entry cached without
    # it). A file whose meaning changed has its model read, once, for the slice.
    from mlcost_lint.model import build

    root, cache = _demo(tmp_path)
    read: list[str] = []
    real = build.read_file_model
    monkeypatch.setattr(build, "read_file_model", lambda pf: read.append(pf.path) or real(pf))
    def cached_run() -> list[str]:
        read.clear()
        cached = _lint(root, cache)
        reads = list(read)
        assert _incremental(cached) and _outcome(cached) == _outcome(_lint(root, None))
        return reads

    _append(root / "sky" / "sft-spot.yaml", "# reviewed")
    _append(root / "configs" / "lora.yml", "# reviewed")
    assert cached_run() == []
    assert _change_a_value(root / "configs" / "lora.yml")
    assert cached_run() == ["configs/lora.yml"]
    # a hook on the file cached without its model reports what a whole run does
    _append(root / "sky" / "sft-spot.yaml", "# a hook")
    hooked = _lint(root, cache, report_paths=frozenset({"sky/sft-spot.yaml"}))
    whole = _lint(root, None)
    assert [(f.code, f.location.line, f.message) for f in hooked.findings] == \
        [(f.code, f.location.line, f.message) for f in whole.findings if f.location.path == "sky/sft-spot.yaml"] != []


def test_a_hook_after_a_comment_in_a_file_that_shapes_others_reads_a_slice(tmp_path):
    root, cache = _demo(tmp_path)
    _append(root / "infra" / "pcluster-config.yaml", "# reviewed")
    _append(root / "k8s" / "dev-box.yaml", "# a hook")
    hooked = _lint(root, cache, report_paths=frozenset({"k8s/dev-box.yaml"}))
    assert len(hooked.files) < 21
    whole = _lint(root, None)
    assert [(f.code, f.location.line, f.message) for f in hooked.findings] == \
        [(f.code, f.location.line, f.message) for f in whole.findings if f.location.path == "k8s/dev-box.yaml"] != []
    _cached_run(root, cache, incremental=True)


def test_a_new_secret_reads_the_whole_project(tmp_path):
    # Stored findings were redacted with the last run's secret-looking values.
    root, cache = _demo(tmp_path)
    _replace(root / "k8s" / "dev-box.yaml", "\n          resources:",
             "\n          env:\n            - name: DB_PASSWORD\n              value: Zq8-hunter2-Kx93vLp\n"
             "          resources:", 1)
    cached = _cached_run(root, cache, incremental=False)
    assert "Zq8-hunter2-Kx93vLp" in cached.secrets


def test_an_added_workload_is_read_with_its_links(tmp_path):
    # A new manifest offers no name another file resolves (slice_choice.may_be_added).
    root, cache = _demo(tmp_path)
    shutil.copy(root / "k8s" / "dev-box.yaml", root / "k8s" / "dev-box-2.yaml")
    cached = _cached_run(root, cache, incremental=True)
    assert {f.location.path for f in cached.findings} >= {"k8s/dev-box.yaml", "k8s/dev-box-2.yaml"}
    _append(root / "k8s" / "dev-box-2.yaml", "# and the next run")
    _cached_run(root, cache, incremental=True)


def test_an_added_workload_that_runs_a_config_recomputes_the_config(tmp_path, monkeypatch):
    # The new Job runs an existing config: the slice lacks it (a miss), so it is
    # widened to the config and its other runners (slice_choice.widened) and
    # read once more; the config's findings are recomputed.
    root, cache = _demo(tmp_path)
    analyses = _analyses(monkeypatch)
    job = (root / "k8s" / "llama-8b-full-ft-job.yaml").read_text()
    assert "llama8b-full-ft.yaml" in job
    (root / "k8s" / "llama-8b-full-ft-job-2.yaml").write_text(job.replace("name: llama-8b-full-ft", "name: llama-8b-b"))
    cached = _lint(root, cache)
    assert _incremental(cached) and len(analyses) == 2
    assert _outcome(cached) == _outcome(_lint(root, None))


def test_an_added_config_reads_the_whole_project(tmp_path):
    # It offers a name: which runners now resolve to it is not in the index.
    root, cache = _demo(tmp_path)
    shutil.copy(root / "configs" / "sft.yaml", root / "configs" / "sft-2.yaml")
    _cached_run(root, cache, incremental=False)


def test_an_added_terraform_file_reads_the_whole_project(tmp_path):
    root, cache = _demo(tmp_path)
    (root / "infra" / "more.tf").write_text('resource "aws_s3_bucket" "more" {\n  bucket = "more"\n}\n')
    _cached_run(root, cache, incremental=False)


def test_a_removed_workload_is_dropped_and_its_joins_recomputed(tmp_path):
    # The Job that ran a config is gone: the config is read again without it
    # (slice_choice.may_go), and the Job's findings go with it.
    root, cache = _demo(tmp_path)
    (root / "k8s" / "llama-8b-full-ft-job.yaml").unlink()
    cached = _cached_run(root, cache, incremental=True)
    assert "k8s/llama-8b-full-ft-job.yaml" not in {f.location.path for f in cached.findings}
    _append(root / "k8s" / "dev-box.yaml", "# and the next run")
    _cached_run(root, cache, incremental=True)


def test_a_renamed_workload_stays_incremental(tmp_path):
    root, cache = _demo(tmp_path)
    (root / "k8s" / "dev-box.yaml").rename(root / "k8s" / "workstation.yaml")
    cached = _cached_run(root, cache, incremental=True)
    assert "k8s/workstation.yaml" in {f.location.path for f in cached.findings}


def test_a_removed_config_reads_the_whole_project(tmp_path):
    # Runners that named it may now resolve to another file of that name.
    root, cache = _demo(tmp_path)
    (root / "configs" / "lora.yml").unlink()
    _cached_run(root, cache, incremental=False)


def test_after_a_hook_that_saw_a_file_removed_the_next_whole_run_stays_incremental(tmp_path):
    # A pull removed a manifest; the hook drops its entry (IndexUpdate: None) and
    # marks its joins; the next whole run recomputes them and drops its findings.
    root, cache = _demo(tmp_path)
    (root / "k8s" / "llama-8b-full-ft-job.yaml").unlink()
    _append(root / "k8s" / "dev-box.yaml", "# a hook")
    hooked = _lint(root, cache, report_paths=frozenset({"k8s/dev-box.yaml"}))
    assert len(hooked.files) < 20
    cached = _cached_run(root, cache, incremental=True)
    assert "k8s/llama-8b-full-ft-job.yaml" not in {f.location.path for f in cached.findings}


def test_after_hooks_the_next_whole_run_recomputes_what_they_reached(tmp_path):
    # A sliced hook on a config changes the index; the last whole run still
    # holds outside the hook's slice, which it marks (incremental.mark_dirty).
    # The config now names a 70B model: the finding at its Job, in a file no
    # hook reported, changes, and the whole run after the hooks has it.
    root, cache = _demo(tmp_path)
    _replace(root / "configs" / "llama8b-full-ft.yaml", "Llama-3.1-8B", "Llama-3.1-70B")
    hooked = _lint(root, cache, report_paths=frozenset({"configs/llama8b-full-ft.yaml"}))
    assert len(hooked.files) < 21     # a slice
    _append(root / "k8s" / "dev-box.yaml", "# a second hook")
    _lint(root, cache, report_paths=frozenset({"k8s/dev-box.yaml"}))
    cached = _cached_run(root, cache, incremental=True)
    job = [f.message for f in cached.findings if f.location.path == "k8s/llama-8b-full-ft-job.yaml"
           and f.code == "MLC202"]
    assert job and "70" in job[0]


def test_after_a_hook_that_read_everything_the_next_whole_run_does_too(tmp_path):
    # A hook that could not slice (a config added) writes a new index: the last
    # whole run no longer goes with it.
    root, cache = _demo(tmp_path)
    shutil.copy(root / "configs" / "sft.yaml", root / "configs" / "sft-2.yaml")
    hooked = _lint(root, cache, report_paths=frozenset({"configs/sft-2.yaml"}))
    assert len(hooked.files) == 22
    _append(root / "configs" / "sft.yaml", "# after")
    _cached_run(root, cache, incremental=False)


def test_a_runner_that_now_names_another_config_reads_the_whole_project(tmp_path):
    # A workload in a changed file linked a config outside its old joins:
    # that config's findings may change (slice_choice.closed).
    root, cache = _demo(tmp_path)
    _replace(root / "k8s" / "llama-8b-full-ft-job.yaml", "llama8b-full-ft.yaml", "sft.yaml")
    _cached_run(root, cache, incremental=None)


def test_suppressions_and_fixes_of_files_not_read_are_kept(tmp_path):
    # An unused suppression (MLC002, computed over every file) and the fixes
    # of findings taken from the last run, through the CLI: byte for byte.
    root, cache = _demo(tmp_path)
    job = root / "k8s" / "dev-box.yaml"
    job.write_text("# mlcost-lint: ignore[MLC999]\n" + job.read_text())
    env = {**os.environ, "_MLCOST_LINT_TRACE_INCREMENTAL": "1"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mlcost_lint", "check", ".", "--select", "ALL", *args],
                              cwd=root, capture_output=True, text=True, env=env)

    cli("--cache-dir", str(cache))
    _append(root / "configs" / "lora.yml", "# edited")
    traces = ""
    for fmt in ("full", "json", "sarif"):
        cached = cli("--cache-dir", str(cache), "--format", fmt, "--color", "never")
        fresh = cli("--no-cache", "--format", fmt, "--color", "never")
        assert cached.stdout == fresh.stdout, fmt
        assert cached.returncode == fresh.returncode == 1
        traces += cached.stderr
    assert "MLC002" in fresh.stdout and "dev-box.yaml" in fresh.stdout
    assert "incremental run" in traces


def test_a_hook_keeps_the_last_whole_runs_outcome_from_its_prune(tmp_path, monkeypatch):
    # Run outcomes are dropped first when the cache is full; the one the last
    # whole run left is what the next whole run takes its findings from.
    import mlcost_lint.cache as cache_mod
    from mlcost_lint.run_cache import RUN_PREFIX

    root, cache = _demo(tmp_path)
    outcomes = [p for p in cache.rglob("*.pkl") if p.parent.name.startswith(RUN_PREFIX)]
    assert outcomes
    # full: the hook's own writes make it drop a few entries, run outcomes first
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", len(list(cache.rglob("*.pkl"))))
    monkeypatch.setattr(cache_mod, "_PRUNE_WRITES", 1)
    config = root / "configs" / "sft.yaml"
    _append(config, "# hook")
    _lint(root, cache, report_paths=frozenset({"configs/sft.yaml"}))
    monkeypatch.undo()
    _append(config, "# and a whole run")
    _cached_run(root, cache, incremental=True)
