"""Determinism: the same tree gives byte-identical output in every format,
whatever --jobs, the cache state or the interpreter's hash seed, including
trees full of broken files (MLC001 positions and messages must not depend
on which worker parsed what)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzing import CORPUS, FIXTURES, FORMATS, lint_tree, mutate, render, seed_files
from hostile_helpers import SENTINEL, SENTINEL_NAME

from mlcost_lint.config import Settings


def _tree(tmp_path: Path) -> Path:
    """A real slice (enough files and bytes for parallel parsing), the demo,
    and hostile files: mutated copies, binary, deep, bomb, secrets."""
    import random

    root = tmp_path / "proj"
    if CORPUS.is_dir():
        shutil.copytree(CORPUS / "kubeflow__training-operator", root / "kubeflow",
                        ignore=shutil.ignore_patterns(".mlcost_lint_cache"))
        shutil.copytree(CORPUS / "axolotl-ai-cloud__axolotl", root / "axolotl",
                        ignore=shutil.ignore_patterns(".mlcost_lint_cache"))
    shutil.copytree(FIXTURES / "demo", root / "demo")
    rng = random.Random(42)
    hostile = root / "hostile"
    hostile.mkdir()
    for i, path in enumerate(rng.sample(seed_files(FIXTURES / "rules"), 30)):
        (hostile / f"{i:02d}-{path.name}").write_bytes(mutate(path.read_bytes(), rng, rounds=3))
    (hostile / "bin.tf").write_bytes(bytes(range(256)))
    (hostile / "deep.json").write_bytes(b'{"kind":"ConfigMap","apiVersion":"v1","x":' + b"[" * 5000 + b"]" * 5000 + b"}")
    (hostile / "secret.yaml").write_bytes(SENTINEL.replace(b"name: sentinel", b"name: tok-abcdef123456")
                                          + b"---\napiVersion: v1\nkind: Secret\nstringData: {p: tok-abcdef123456}\n")
    (root / SENTINEL_NAME).parent.mkdir()
    (root / SENTINEL_NAME).write_bytes(SENTINEL)
    return root


@pytest.fixture
def tree(hostile_tree: Path) -> Path:
    return hostile_tree


def _outputs(root: Path, jobs: int, cache_dir: Path | None, *, run_cache: bool | None = None,
             incremental: bool | None = None) -> dict[str, str]:
    """Every format; ``run_cache``: True = the outcome must come from the run
    cache, False = it must not, None = either; ``incremental``: whether it
    must be an incremental run (mlcost_lint.incremental: no whole model)."""
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings, jobs=jobs, cache_dir=cache_dir, reuse_run=run_cache is not None)
    if run_cache is not None:
        assert result.from_run_cache is run_cache
    if incremental is not None:
        assert (result.project is None and not result.from_run_cache) is incremental
    return {fmt: render(result, settings, fmt, root) for fmt in FORMATS}


def _same(runs: dict[str, dict[str, str]], reference: dict[str, str]) -> None:
    for name, outputs in runs.items():
        for fmt in FORMATS:
            assert outputs[fmt] == reference[fmt], f"{fmt} differs: {name}"


def test_every_format_identical_across_jobs_and_cache_states(tree: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    runs = {
        "serial": _outputs(tree, 1, None),
        "cold cache, parallel": _outputs(tree, 2, cache),
        "warm cache, serial": _outputs(tree, 1, cache),
    }
    assert any(cache.rglob("*.pkl"))
    reference = runs.pop("serial")
    assert '"MLC001"' in reference["json"] and "tok-abcdef123456" not in reference["sarif"]
    for name, outputs in runs.items():
        for fmt in FORMATS:
            assert outputs[fmt] == reference[fmt], f"{fmt} differs: {name}"


def test_every_format_identical_across_run_cache_states(tree: Path, tmp_path: Path):
    """The run cache (a whole run's outcome): filled cold, hit warm, missed
    after one file changed (partially warm: every other file from the parse
    cache; with the corpus slice in the tree, an incremental run: every
    other file's findings from the last run), and hit again when the
    change is undone; then an incremental run after a second change."""
    cache = tmp_path / "cache"
    reference = _outputs(tree, 1, None)
    _same({"cold, fills the run cache": _outputs(tree, 2, cache, run_cache=False),
           "warm, from the run cache": _outputs(tree, 1, cache, run_cache=True),
           "warm again, parallel": _outputs(tree, 2, cache, run_cache=True)}, reference)
    changed = tree / "demo" / "configs" / "llama8b-full-ft.yaml"
    original = changed.read_bytes()
    changed.write_bytes(original.replace(b"save_total_limit", b"save_total_limit_x", 1)
                        if b"save_total_limit" in original else original + b"\nsave_total_limit: 0\n")
    after = _outputs(tree, 1, None)
    assert after["json"] != reference["json"]      # the change shows in the findings
    # without the corpus the hostile files (read by every slice) are most of the tree: not worth a slice
    sliced = True if CORPUS.is_dir() else None
    _same({"partially warm": _outputs(tree, 2, cache, run_cache=False, incremental=sliced),
           "warm after the change": _outputs(tree, 1, cache, run_cache=True)}, after)
    changed.write_bytes(original)
    _same({"change undone": _outputs(tree, 1, cache, run_cache=True)}, reference)
    tf = tree / "demo" / "infra" / "variables.tf"
    tf.write_bytes(tf.read_bytes() + b"\n# reviewed\n")
    _same({"a Terraform comment, incremental": _outputs(tree, 1, cache, run_cache=False, incremental=sliced)},
          _outputs(tree, 1, None))


def _cli(root: Path, *args: str, hash_seed: str) -> bytes:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run([sys.executable, "-m", "mlcost_lint", ".", "--exit-zero", *args], cwd=root, env=env,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr
    return proc.stdout


def test_real_cli_identical_across_hash_seeds_jobs_and_cache(tree: Path, tmp_path: Path):
    """Set and dict order must not leak into the output: two interpreters
    with different hash seeds, serial and uncached vs parallel and cached."""
    cache = str(tmp_path / "cache")
    first = _cli(tree, "--format", "sarif", "--no-cache", "--jobs", "1", hash_seed="1")
    second = _cli(tree, "--format", "sarif", "--cache-dir", cache, "--jobs", "2", hash_seed="2")
    assert first == second
    assert first.count(b'"ruleId": "MLC001"') > 3
    third = _cli(tree, "--format", "sarif", "--cache-dir", cache, "--jobs", "1", hash_seed="3")   # run cache hit
    assert third == first
    for fmt in ("text", "full", "json"):
        cold = _cli(tree, "--format", fmt, "--no-cache", hash_seed="1")
        assert _cli(tree, "--format", fmt, "--cache-dir", cache, hash_seed="2") == cold, fmt


def test_every_format_identical_with_the_file_index(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The file index (files whose stat is unchanged are not read): identical
    output when it is filled, when it is used with every parse entry present,
    with a random half of them gone (the unread files' bytes are read late:
    for a missing parse result, for a .tf tree to re-parse), with all gone,
    and after a same-size change with its mtime put back."""
    import random

    import mlcost_lint.file_index as file_index
    import mlcost_lint.safe_io as safe_io

    monkeypatch.setattr(file_index, "RACY_SECONDS", 0)    # the copied files count as settled
    root = tmp_path / "proj"
    shutil.copytree(tree, root)
    cache = tmp_path / "cache"
    reference = _outputs(root, 1, None)
    _same({"cold, fills the index": _outputs(root, 2, cache)}, reference)
    assert list(cache.glob("*/i?/*.pkl")), "no file index written"

    reads: list[str] = []
    real = safe_io.read_regular
    monkeypatch.setattr(safe_io, "read_regular", lambda path, *a, **k: reads.append(str(path)) or real(path, *a, **k))
    _same({"warm, from the index": _outputs(root, 1, cache)}, reference)
    assert not [r for r in reads if str(root) in r], "unchanged files were read"

    entries = sorted(p for p in cache.glob("*/[0-9a-f][0-9a-f]/*.pkl"))
    assert entries
    for p in random.Random(7).sample(entries, len(entries) // 2):
        p.unlink()
    _same({"half the parse entries gone": _outputs(root, 2, cache)}, reference)
    for p in cache.glob("*/[0-9a-f][0-9a-f]/*.pkl"):
        p.unlink()
    _same({"every parse entry gone": _outputs(root, 1, cache)}, reference)

    changed = root / "demo" / "configs" / "llama8b-full-ft.yaml"
    before = changed.stat()
    original = changed.read_bytes()
    assert b"bf16: true" in original
    changed.write_bytes(original.replace(b"bf16: true", b"bf16: nope", 1))
    os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = _outputs(root, 1, None)
    assert after["json"] != reference["json"]
    _same({"same-size change, mtime put back": _outputs(root, 1, cache)}, after)


def _parsed_in_parent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Parse workers for any tree (no size threshold); the returned list
    collects the files the parent process parses itself."""
    from mlcost_lint import parse_stage

    monkeypatch.setattr(parse_stage, "_PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(parse_stage, "_PARALLEL_MIN_BYTES", 0)
    in_parent: list[str] = []
    real_parse = parse_stage.parse_bytes
    parent = os.getpid()

    def counting(data, display, *args, **kwargs):
        if os.getpid() == parent:
            in_parent.append(display)
        return real_parse(data, display, *args, **kwargs)

    monkeypatch.setattr(parse_stage, "parse_bytes", counting)
    return in_parent


def test_model_built_while_workers_parse_is_identical(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """With workers, a lint run builds the model of the files as they
    arrive (parse_stage._ModelFeed): Terraform once every Terraform or JSON
    file is in, then each file in input order, all before the parse step
    returns; the parent parses nothing itself. The output is the same as
    one process's, with a cache filled that way or without one."""
    from mlcost_lint import parse_stage
    from mlcost_lint.model.build import ProjectBuilder

    in_parent = _parsed_in_parent(monkeypatch)

    calls: list[str] = []
    during_parse: list[str] = []
    real_many, real_add, real_terraform = parse_stage._parse_many, ProjectBuilder.add, ProjectBuilder.terraform

    def many(*args, **kwargs):
        out = real_many(*args, **kwargs)
        during_parse.extend(calls)
        return out

    monkeypatch.setattr(parse_stage, "_parse_many", many)
    monkeypatch.setattr(ProjectBuilder, "add", lambda self, pf: calls.append(pf.path) or real_add(self, pf))
    monkeypatch.setattr(ProjectBuilder, "terraform",
                        lambda self, files: calls.append("<terraform>") or real_terraform(self, files))
    serial = _outputs(tree, 1, None)
    serial_calls = list(calls)
    assert in_parent and not during_parse       # one process: parsed here, modelled after
    in_parent.clear()
    calls.clear()
    parallel = _outputs(tree, 2, None)
    assert in_parent == []                      # the workers parsed every file
    assert during_parse == calls == serial_calls    # the same calls, in the same order, during the parse
    _same({"parallel, model built as files arrive": parallel,
           "parallel, filling a cache": _outputs(tree, 2, tmp_path / "cache")}, serial)


def test_parse_all_with_the_parent_taking_unstarted_chunks_is_identical(tree: Path, monkeypatch: pytest.MonkeyPatch):
    """Without a model to build (parse_all: bench/stages.py, the forked-worker
    tests), the parent parses the chunks no worker has started: the parse
    results are those of one process."""
    from mlcost_lint.discover import discover
    from mlcost_lint.parse_stage import parse_all
    from mlcost_lint.pipeline import LintOptions

    in_parent = _parsed_in_parent(monkeypatch)
    settings = Settings(root=tree)
    files = discover([str(tree)], [], tree).files

    def shown(parsed):
        return [(pf.path, pf.kind, [(e.line, e.column, e.message) for e in pf.errors], pf.skipped_reason,
                 [doc.data for doc in pf.documents]) for pf in parsed]

    serial = shown(parse_all(files, settings, LintOptions(jobs=1, use_cache=False)))
    every_file = len(in_parent)
    in_parent.clear()
    parallel = shown(parse_all(files, settings, LintOptions(jobs=2, use_cache=False)))
    assert 0 < len(in_parent) < every_file    # the parent parsed some chunks, the workers the others
    assert parallel == serial
