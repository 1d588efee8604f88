"""The parse cache: never trusted when tampered with, safe when shared, and
invisible in the results (same output cold, warm, serial or parallel)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import CORPUS, ROOT

from mlcost_lint.cache import ParseCache
from mlcost_lint.parse.document import FileKind, ParsedFile


def _cache(tmp_path: Path) -> ParseCache:
    return ParseCache(tmp_path / "cache", "test")


def test_roundtrip_and_corruption(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    cache = _cache(tmp_path)
    key = cache.key(b"kind: Pod\n", "a.yaml", "yaml")
    assert cache.get(key) is None
    cache.put(key, ParsedFile(path="a.yaml", kind=FileKind.YAML))
    assert cache.get(key).path == "a.yaml"
    entry = next((tmp_path / "cache").rglob("*.pkl"))
    entry.write_bytes(entry.read_bytes()[:-5])          # truncated on disk
    assert cache.get(key) is None
    # A "cache" committed to a repository: a valid pickle without our signature.
    entry.write_bytes(b"\0" * 32 + pickle.dumps(ParsedFile(path="evil", kind=FileKind.YAML)))
    assert cache.get(key) is None
    cache.put(key, ParsedFile(path="a.yaml", kind=FileKind.YAML))  # rebuilt
    assert cache.get(key).path == "a.yaml"


def test_key_depends_on_content_path_kind_and_settings(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    a = _cache(tmp_path)
    b = ParseCache(tmp_path / "cache", "other-settings")
    base = a.key(b"x", "a.yaml", "yaml")
    assert len({base, a.key(b"y", "a.yaml", "yaml"), a.key(b"x", "b.yaml", "yaml"),
                a.key(b"x", "a.yaml", "json"), b.key(b"x", "a.yaml", "yaml")}) == 5


def test_entries_of_other_parse_code_are_not_loaded(tmp_path: Path, monkeypatch):
    """An entry written by other parse-stage code (a ParsedFile of another
    shape, same version number) is a miss, never an object of the old shape."""
    import mlcost_lint.cache as cache_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    old = _cache(tmp_path)
    key = old.key(b"kind: Pod\n", "a.yaml", "yaml")
    old.put(key, ParsedFile(path="a.yaml", kind=FileKind.YAML))
    assert _cache(tmp_path).get(key).path == "a.yaml"
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "other-parse-code")
    new = _cache(tmp_path)
    new_key = new.key(b"kind: Pod\n", "a.yaml", "yaml")
    assert new_key != key and new.get(new_key) is None


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlcost_lint", *args], cwd=cwd, capture_output=True, timeout=300)


def _corpus_copy(tmp_path: Path) -> Path:
    """A slice of the real corpus plus the demo, so parallel parsing kicks in."""
    import shutil

    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not beside the repository (a real slice makes parsing parallel)")
    dest = tmp_path / "proj"
    shutil.copytree(CORPUS / "kubeflow__training-operator", dest / "kubeflow")
    shutil.copytree(CORPUS / "axolotl-ai-cloud__axolotl", dest / "axolotl")
    shutil.copytree(ROOT / "fixtures" / "demo", dest / "demo")
    return dest


def test_output_identical_across_jobs_and_cache_states(tmp_path: Path):
    proj = _corpus_copy(tmp_path)
    outputs = set()
    for args in (["--no-cache", "--jobs", "1"], ["--no-cache", "--jobs", "2"],
                 ["--cache-dir", str(tmp_path / "c"), "--jobs", "2"],   # cold, fills the cache
                 ["--cache-dir", str(tmp_path / "c"), "--jobs", "1"]):  # warm
        for fmt in ("sarif",):
            r = _run([".", "--format", fmt, "--exit-zero", *args], proj)
            assert r.returncode == 0, r.stderr.decode()
            outputs.add(r.stdout)
    assert len(outputs) == 1
    assert any((tmp_path / "c").rglob("*.pkl"))


def test_two_runs_sharing_a_cache_at_once(tmp_path: Path):
    proj = _corpus_copy(tmp_path)
    expected = _run([".", "--format", "json", "--exit-zero", "--no-cache"], proj).stdout
    cmd = [sys.executable, "-m", "mlcost_lint", ".", "--format", "json", "--exit-zero",
           "--cache-dir", str(tmp_path / "shared")]
    procs = [subprocess.Popen(cmd, cwd=proj, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert outs[0][0] == expected and outs[1][0] == expected


def test_folder_marked_and_other_versions_removed(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    root = tmp_path / "cache"
    (root / "v0.0.9" / "ab").mkdir(parents=True)
    (root / "v0.0.9" / "ab" / "ab12.pkl").write_bytes(b"old")
    (root / "vendor").mkdir()           # not a version folder: never deleted
    cache = ParseCache(root, "test")
    assert not (root / "v0.0.9").exists()
    assert (root / "vendor").is_dir()
    assert (root / ".gitignore").read_text() == "# Created by mlcost-lint\n*\n"
    assert (root / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    assert cache.folder == root / f"v{__import__('mlcost_lint').__version__}"


def _five_aged_entries(tmp_path: Path, monkeypatch) -> tuple[ParseCache, list[str]]:
    """A cache of five entries, the first the oldest, that keeps three."""
    import os

    import mlcost_lint.cache as cache_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 3)
    cache = _cache(tmp_path)
    keys = [cache.key(str(i).encode(), f"{i}.yaml", "yaml") for i in range(5)]
    for age, key in enumerate(keys):
        cache.put(key, ParsedFile(path=key, kind=FileKind.YAML))
        os.utime(cache._path(key), (1_000_000 + age, 1_000_000 + age))   # keys[0] oldest
    return cache, keys


def test_prune_drops_oldest_but_keeps_entries_in_use(tmp_path: Path, monkeypatch):
    import os

    cache, keys = _five_aged_entries(tmp_path, monkeypatch)
    (cache._path(keys[1]).parent / ".tmp-stale").write_bytes(b"x")
    os.utime(cache._path(keys[1]).parent / ".tmp-stale", (1, 1))
    assert cache.get(keys[0]) is not None   # in use by this run
    cache.prune()
    left = {p.stem for p in (tmp_path / "cache").rglob("*.pkl")}
    assert left == {keys[0], keys[3], keys[4]}
    assert not list((tmp_path / "cache").rglob(".tmp-*"))


def test_entries_kept_later_are_named_only_when_a_prune_scans(tmp_path: Path, monkeypatch):
    # pipeline._keep_parse_results names the entries of every file of the
    # tree (8,000 on bench/'s largest): only a prune that scans needs them.
    cache, keys = _five_aged_entries(tmp_path, monkeypatch)
    asked = []
    cache.keep_later(lambda: asked.append("first") or [keys[0], keys[1]])
    cache.prune()       # no stamp yet: scanned; the two oldest are kept, the next two go
    assert asked == ["first"]
    assert {p.stem for p in (tmp_path / "cache").rglob("*.pkl")} == {keys[0], keys[1], keys[4]}

    again = _cache(tmp_path)     # a run a moment later: one write, no scan
    again.put(again.key(b"new", "new.yaml", "yaml"), ParsedFile(path="new.yaml", kind=FileKind.YAML))
    again.keep_later(lambda: asked.append("second") or [])
    again.prune()
    assert asked == ["first"]
    assert len(list((tmp_path / "cache").rglob("*.pkl"))) == 4


def _yaml_project(tmp_path: Path, n: int = 30) -> list:
    from mlcost_lint.discover import SourceFile

    files = []
    for i in range(n):
        body = "".join(f"  key_{j}: value-{i}-{j}\n" for j in range(600))
        path = tmp_path / f"cfg{i:02d}.yaml"
        path.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n{body}")
        files.append(SourceFile(path, path.name, FileKind.YAML))
    return files


def test_parallel_parse_equals_serial_and_workers_fill_the_cache(tmp_path: Path, monkeypatch):
    from mlcost_lint.config import Settings
    from mlcost_lint.parse_stage import parse_all
    from mlcost_lint.pipeline import LintOptions

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    files = _yaml_project(tmp_path)
    assert sum(f.path.stat().st_size for f in files) > 256 * 1024   # over the parallel threshold
    settings = Settings()
    serial = parse_all(files, settings, LintOptions(jobs=1, use_cache=False))
    parallel = parse_all(files, settings, LintOptions(jobs=2, cache_dir=tmp_path / "c"))
    assert parallel == serial
    assert [pf.path for pf in parallel] == [f.display for f in files]
    assert len(list((tmp_path / "c").rglob("*.pkl"))) == len(files)   # written by the workers
    warm = parse_all(files, settings, LintOptions(jobs=2, cache_dir=tmp_path / "c"))
    assert warm == serial
    # A corrupted entry is rebuilt, not trusted.
    entry = next((tmp_path / "c").rglob("*.pkl"))
    entry.write_bytes(b"garbage")
    assert parse_all(files, settings, LintOptions(jobs=1, cache_dir=tmp_path / "c")) == serial
    assert entry.read_bytes() != b"garbage"


def test_every_kind_of_parse_result_loads_from_the_cache(tmp_path: Path, monkeypatch):
    """The unpickler's allow-list covers every parse result: a Slurm script's
    (parse.slurm) was missing once, so Slurm files were a silent miss on
    every run."""
    from mlcost_lint.parse import parse_bytes

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    cache = _cache(tmp_path)
    samples = {
        FileKind.SLURM: ("job.sbatch", b"#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=1:00:00\ntorchrun train.py\n"),
        FileKind.TERRAFORM: ("main.tf", b'resource "aws_instance" "a" {\n  instance_type = "p4d.24xlarge"\n}\n'),
        FileKind.YAML: ("job.yaml", b"kind: Pod\napiVersion: v1\n"),
        FileKind.JSON: ("c.json", b'{"bf16": true}\n'),
    }
    for kind, (name, data) in samples.items():
        parsed = parse_bytes(data, name, kind)
        key = cache.key(data, name, kind.value)
        cache.put(key, parsed)
        loaded = cache.get(key)
        assert isinstance(loaded, ParsedFile), kind
        assert loaded == parsed, kind


def test_prune_scans_again_only_after_many_writes_or_an_old_or_future_stamp(tmp_path: Path, monkeypatch):
    import os
    import time

    import mlcost_lint.cache as cache_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 2)

    def fill(cache, start: int, n: int) -> None:
        for i in range(start, start + n):
            key = cache.key(str(i).encode(), f"{i}.yaml", "yaml")
            cache.put(key, ParsedFile(path=key, kind=FileKind.YAML))
            os.utime(cache._path(key), (1_000_000 + i, 1_000_000 + i))

    def entries() -> int:
        return len(list((tmp_path / "cache").rglob("*.pkl")))

    first = _cache(tmp_path)
    fill(first, 0, 4)
    first.prune()                       # no stamp yet: scanned, trimmed to the limit
    assert entries() == 2
    stamp = first.folder / ".last-prune"
    assert stamp.is_file()

    second = _cache(tmp_path)           # a hook run a moment later: two writes, no scan
    fill(second, 10, 2)
    second.prune()
    assert entries() == 4

    os.utime(stamp, (time.time() + 3600, time.time() + 3600))   # dated in the future: not trusted
    second.prune()
    assert entries() == 2

    third = _cache(tmp_path)
    fill(third, 20, 2)
    old = time.time() - cache_mod._PRUNE_INTERVAL_SECONDS - 5
    os.utime(stamp, (old, old))         # the last scan is old: scanned
    third.prune()
    assert entries() == 2

    monkeypatch.setattr(cache_mod, "_PRUNE_WRITES", 2)
    fourth = _cache(tmp_path)           # a recent stamp, but this run wrote many entries: scanned
    fill(fourth, 30, 2)
    fourth.prune()
    assert entries() == 2


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_folder_descriptors_are_kept_per_cache_and_closed(tmp_path: Path, monkeypatch):
    """Entries are read through one kept descriptor per shard folder; a shard
    that appears later (a worker made it) is found; close() and collection
    close them all, so runs in one process do not leak descriptors."""
    import gc

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))

    def open_fds() -> int:
        return len(list(Path("/proc/self/fd").iterdir()))

    before = open_fds()
    cache = _cache(tmp_path)
    keys = [cache.key(f"kind: Pod #{i}\n".encode(), f"{i}.yaml", "yaml") for i in range(40)]
    assert cache.get(keys[0]) is None          # its shard does not exist yet: nothing kept
    for i, key in enumerate(keys):
        cache.put(key, ParsedFile(path=f"{i}.yaml", kind=FileKind.YAML))
    assert [cache.get(k).path for k in keys] == [f"{i}.yaml" for i in range(40)]
    shards = {k[:2] for k in keys}
    assert open_fds() - before == len(shards) + 1      # the shards and the version folder
    cache.close()
    assert open_fds() == before
    assert cache.get(keys[1]).path == "1.yaml"         # reopened after close
    del cache
    gc.collect()
    assert open_fds() == before


_NO_NOFOLLOW = """
import os, sys
del os.O_NOFOLLOW, os.O_DIRECTORY      # as on Windows
sys.argv = ["mlcost-lint", *sys.argv[1:]]
from mlcost_lint.entry import main
main()
"""


def test_a_system_that_cannot_refuse_links_runs_without_the_cache(tmp_path: Path):
    """Where files cannot be opened without following links (Windows has no
    O_NOFOLLOW or O_DIRECTORY), the cache is not used, said once on stderr,
    and the report is that of --no-cache; nothing is written or replayed.
    Before, importing the cache raised AttributeError on every cached run."""
    import os
    import shutil

    from mlc_testing import FIXTURES

    proj = tmp_path / "proj"
    shutil.copytree(FIXTURES / "demo", proj)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "home"), "_MLCOST_LINT_REPLAY_MARGIN_NS": "0"}
    expected = subprocess.run([sys.executable, "-m", "mlcost_lint", ".", "--no-cache"], cwd=proj, env=env,
                              capture_output=True, timeout=300)
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _NO_NOFOLLOW, ".", "--cache-dir", str(tmp_path / "c")], cwd=proj,
                           env=env, capture_output=True, timeout=300)
        assert (r.returncode, r.stdout) == (expected.returncode, expected.stdout) and r.returncode == 1
        assert b"running without the parse cache: this system cannot open files without following links" \
            in r.stderr, r.stderr.decode()
    assert not (tmp_path / "c").exists()


# ---------------------------------------------- each file's model, cached ---

_MODELLED = {
    "job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n"
                "      containers:\n        - name: main\n          image: trainer\n"
                "          command: [torchrun, --nproc_per_node=8, train.py, --config, sft.yaml]\n"
                "          resources: {limits: {nvidia.com/gpu: 8}}\n",
    "sft.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 4\nbf16: true\n"
                "gradient_checkpointing: true\nlearning_rate: 2.0e-5\n",
    "train.sbatch": "#!/bin/bash\n#SBATCH --gpus-per-node=8\n#SBATCH --nodes=2\nexport NCCL_DEBUG=INFO\n"
                    "srun torchrun --nproc_per_node=8 train.py\n",
    "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ds}\ndata:\n  ds_config.json: |\n"
               '    {"train_batch_size": 64, "wall_clock_breakdown": true,\n'
               '     "zero_optimization": {"stage": 2}}\n',
}


def test_a_file_found_in_the_cache_is_not_modelled_again(tmp_path: Path, monkeypatch):
    """What a file adds to the model on its own (model.build.FileModel) is
    read where the file is parsed and cached with its parse result: a run
    that finds the file in the cache reads no document of it again, and its
    output is the one of a run without a cache."""
    from mlcost_lint.config import Settings
    from mlcost_lint.model import build
    from mlcost_lint.pipeline import LintOptions, lint

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in _MODELLED.items():
        (root / name).write_text(text)
    read: list[str] = []
    real = build.read_file_model
    monkeypatch.setattr(build, "read_file_model", lambda pf: read.append(pf.path) or real(pf))
    settings = Settings(root=root)

    def run(cache: Path | None) -> list[tuple]:
        monkeypatch.chdir(root)
        result = lint(["."], settings, LintOptions(jobs=1, use_cache=cache is not None, cache_dir=cache))
        return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]

    reference = run(None)
    assert sorted(read) == sorted(_MODELLED)
    assert {"sft.yaml", "train.sbatch", "job.yaml"} <= {path for _, path, *_ in reference}
    assert ("MLC403", "cm.yaml", 6) in {(code, path, line) for code, path, line, *_ in reference}  # embedded config
    for expected_reads in (sorted(_MODELLED), []):     # fills the cache, then reads from it
        read.clear()
        assert run(tmp_path / "cache") == reference
        assert sorted(read) == expected_reads
    (root / "sft.yaml").write_text(_MODELLED["sft.yaml"].replace("bf16: true", "bf16: false"))
    read.clear()
    changed = run(tmp_path / "cache")
    assert read == ["sft.yaml"] and changed != reference
    read.clear()
    assert run(None) == changed


def test_every_fixture_parse_result_and_model_loads_through_the_cache_unpickler():
    """The cache loads only this package's data classes (cache._DATA_MODULES).
    A model class of a module not named there would make every cached file
    that holds one a miss, silently: each fixture's parse result, with the
    model read from it, must load back whole."""
    from mlcost_lint import cache_trees
    from mlcost_lint.cache import load_payload
    from mlcost_lint.discover import discover
    from mlcost_lint.parse.document import TERRAFORM_KINDS
    from mlcost_lint.parse_stage import _parse_file

    files = discover([str(ROOT / "fixtures")], [], ROOT / "fixtures").files
    assert len(files) > 300
    modelled = 0
    for sf in files:
        parsed = _parse_file(Path(sf.path).read_bytes(), sf.display, sf.kind, 500, True)
        # a Terraform file's model is empty and not read (parse_stage._parse_file)
        assert (parsed.model is None) == (sf.kind in TERRAFORM_KINDS), sf.display
        back = cache_trees.joined(*cache_trees.payloads(parsed))
        for payload in cache_trees.payloads(parsed):
            if payload is not None:
                load_payload(payload)           # raises on a class the cache does not load
        assert back.model == parsed.model, sf.display
        modelled += back.model is not None and bool(back.model.workloads or back.model.training)
    assert modelled > 100


def test_prune_drops_run_outcomes_before_older_parse_results(tmp_path: Path, monkeypatch):
    # Each state of the tree leaves a run outcome (run cache, replay record);
    # past the limit those go first, however new, and the parse results the
    # first run wrote stay (reading an entry does not refresh its time).
    import os

    import mlcost_lint.cache as cache_mod
    from mlcost_lint.run_cache import RUN_PREFIX

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 4)
    cache = _cache(tmp_path)
    parsed = [cache.key(str(i).encode(), f"{i}.yaml", "yaml") for i in range(3)]
    runs = [RUN_PREFIX + cache.key(f"run{i}".encode(), "run", "run")[1:] for i in range(3)]
    for age, key in enumerate([*parsed, *runs]):       # the parse results are the oldest
        cache.put(key, ParsedFile(path=key, kind=FileKind.YAML))
        os.utime(cache._path(key), (1_000_000 + age, 1_000_000 + age))
    cache.prune()
    left = {p.stem for p in (tmp_path / "cache").rglob("*.pkl")}
    assert left == {*parsed, runs[2]}


def test_a_run_keeps_the_parse_results_of_the_tree_as_it_is(tmp_path: Path, monkeypatch):
    # A hook reads a few parse results; its prune must not drop the others'
    # (older than the results of contents changed since): the next whole run
    # would parse every file again.
    import os

    import mlcost_lint.cache as cache_mod
    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    root.mkdir()
    for i in range(6):
        (root / f"job{i}.yaml").write_text(f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j{i}\n")
    cache_dir = tmp_path / "cache"
    monkeypatch.chdir(root)

    def run(**options) -> None:
        lint(["."], Settings(root=root), LintOptions(jobs=1, cache_dir=cache_dir, **options))

    run()
    parse_entries = {p for p in cache_dir.rglob("*.pkl") if len(p.parent.name) == 2 and p.parent.name.isalnum()
                     and all(c in "0123456789abcdef" for c in p.parent.name)}
    assert len(parse_entries) >= 6
    for p in parse_entries:
        os.utime(p, (1_000_000, 1_000_000))          # the oldest entries of the folder
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", len(parse_entries))
    monkeypatch.setattr(cache_mod, "_PRUNE_WRITES", 1)
    (root / "job0.yaml").write_text("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: changed\n")
    run(report_paths=frozenset({"job0.yaml"}))
    left = {p for p in parse_entries if p.exists()}
    assert len(left) >= len(parse_entries) - 1      # job0's old content may go; the other files' stay


def test_reading_an_old_entry_makes_it_the_last_to_be_dropped(tmp_path: Path, monkeypatch):
    # Prune drops the entries used longest ago: one read a while after it was
    # written counts as new, one nobody read again (an old content's) goes.
    import os

    import mlcost_lint.cache as cache_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 2)
    cache = _cache(tmp_path)
    read, unread, new = (cache.key(str(i).encode(), f"{i}.yaml", "yaml") for i in range(3))
    for age, key in enumerate((read, unread, new)):
        cache.put(key, ParsedFile(path=key, kind=FileKind.YAML))
        os.utime(cache._path(key), (1_000_000 + age, 1_000_000 + age))
    other = _cache(tmp_path)          # a later run reads the oldest entry
    assert other.get(read) is not None
    assert cache._path(read).stat().st_mtime > 2_000_000
    cache.prune()
    assert {p.stem for p in (tmp_path / "cache").rglob("*.pkl")} == {read, new}


def test_a_large_entry_loads_with_collection_paused_and_frozen(tmp_path: Path, monkeypatch):
    """An index, a summary or a folder walk (1-2 MB on 8,000 files) lives
    for the run: it loads with collection paused, then frozen (gc_pause), so
    neither its load nor later collections walk its objects."""
    import gc

    from mlcost_lint.model.core import Location

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    cache = _cache(tmp_path)
    small, large = cache.key(b"s", "s.yaml", "yaml"), cache.key(b"l", "l.yaml", "yaml")
    cache.put(small, [Location(f"f{i}.tf", i, 1) for i in range(10)])
    cache.put(large, [Location(f"f{i}.tf", i, 1) for i in range(20_000)])
    collections = []
    gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
    try:
        gc.unfreeze()
        assert gc.isenabled()
        assert len(cache.get(small)) == 10 and gc.get_freeze_count() == 0
        collections.clear()
        loaded = cache.get(large)
        assert collections == [] and gc.isenabled()
        assert len(loaded) == 20_000 and gc.get_freeze_count() >= 20_000
    finally:
        gc.callbacks.pop()
        gc.unfreeze()


def test_an_entry_is_signed_as_before_and_read_in_one_piece(tmp_path: Path):
    # sign() hashes the key and the payload in place: the same digest as over
    # their concatenation, so entries written before still verify
    import hashlib
    import hmac

    from mlcost_lint.cache_io import SIG_LEN, read_regular_at, sign, signed, verified

    secret, payload = b"s" * 32, bytes(range(256)) * 12_000     # 3 MB: more than one read's chunk
    assert sign(secret, "k1", payload) == hmac.new(secret, b"k1" + payload, hashlib.sha256).digest()
    blob = sign(secret, "k1", payload) + payload
    assert signed(blob, secret, "k1") and verified(blob, secret, "k1") == payload
    assert not signed(blob, secret, "k2") and verified(blob[:-1], secret, "k1") is None
    assert not signed(blob[:SIG_LEN - 1], secret, "k1")
    entry = tmp_path / "entry.pkl"
    entry.write_bytes(blob)
    assert read_regular_at(str(entry), None, len(blob)) == blob
    assert read_regular_at(str(entry), None, len(blob) - 1) is None      # over the limit
