"""Malformed input of every kind ends as an MLC001 finding or a skip, never a
traceback, and every other file is still linted (the sentinel's finding)."""

from __future__ import annotations

import json

import os
import random
import shutil
import time
from pathlib import Path

import pytest

from fuzzing import CORPUS, FIXTURES, check_tree, internal_errors, key_paths, lint_tree, seed_files, truncations
from hostile_helpers import SENTINEL, SENTINEL_NAME, findings_of, lint_with_sentinel, only

from mlcost_lint.config import Settings

JOB = b"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: t\n"
CONFIGMAP = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"


# ------------------------------------------------------------ syntax ---

def _truncation_cases(path: Path, max_cuts: int | None) -> list[bytes]:
    return truncations(path.read_bytes(), max_cuts, random.Random(0))


DEMO_FILES = seed_files(FIXTURES / "demo") + seed_files(FIXTURES / "terraform" / "json_config")


@pytest.mark.parametrize("path", DEMO_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_line_truncation_of_fixtures(path: Path, tmp_path: Path):
    """HCL, YAML and JSON cut after every line and inside lines: a finding
    or nothing, never an internal error, the other file still linted."""
    for i, data in enumerate(_truncation_cases(path, None)):
        lint_with_sentinel(tmp_path / str(i), {path.name: data})


CORPUS_SLICE = seed_files(CORPUS)[::97]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_truncation_of_a_corpus_slice(tmp_path: Path):
    assert len(CORPUS_SLICE) >= 8
    for n, path in enumerate(CORPUS_SLICE):
        for i, data in enumerate(_truncation_cases(path, 12)):
            lint_with_sentinel(tmp_path / f"{n}-{i}", {path.name: data})


def test_syntax_errors_carry_the_parser_position(tmp_path: Path):
    result = lint_with_sentinel(tmp_path, {
        "tabs.yaml": JOB + b"spec:\n\ttemplate: {}\n",
        "broken.tf": b'resource "aws_instance" "x" {\n  instance_type = "p4d.24xlarge"\n',
        "one-line.json": b'{"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": 1,}}',
        "train.json": b'{"per_device_train_batch_size": 4,}',
        "nan.json": b'{"per_device_train_batch_size": NaN}',
        "empty.tf.json": b"",
    })
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == [
        ("MLC001", "broken.tf", 3, 1, "unexpected end of file"),
        ("MLC001", "empty.tf.json", 1, 1, "JSON syntax error: Expecting value"),
        ("MLC001", "nan.json", 1, 1, "JSON error: NaN is not valid JSON"),
        ("MLC001", "one-line.json", 1, 59, "JSON syntax error: Expecting property name enclosed in double quotes"),
        ("MLC001", "tabs.yaml", 6, 1,
         "YAML syntax error: while scanning for the next token found character that cannot start any token"),
        ("MLC001", "train.json", 1, 35, "JSON syntax error: Expecting property name enclosed in double quotes"),
    ]


def test_duplicate_keys_last_one_wins_quietly(tmp_path: Path):
    """YAML and JSON both keep the last value (what json.loads and PyYAML do)."""
    result = lint_with_sentinel(tmp_path, {
        "dup.yaml": CONFIGMAP.replace(b"name: cm\n", b"name: a\n  name: b\n") + b"data: {}\n",
        "dup.json": b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "name": "d"}}',
    })
    assert sorted(cm.name for cm in result.project.kubernetes.config_maps) == ["b", "d"]
    assert only(result, "dup.yaml") == only(result, "dup.json") == []


def test_unknown_kinds_api_versions_and_odd_roots_are_ignored(tmp_path: Path):
    result = lint_with_sentinel(tmp_path, {
        "crd.yaml": b"apiVersion: example.com/v9alpha42\nkind: FluxCapacitor\nmetadata: {name: x}\nspec: {gpus: 8}\n",
        "kind-list.yaml": b"apiVersion: v99\nkind: [Job]\nmetadata: {name: x}\n",
        "kind-null.yaml": b"apiVersion: batch/v1\nkind:\nmetadata: {name: x}\n",
        "future-job.yaml": JOB.replace(b"batch/v1", b"batch/v7") + b"spec: {template: {spec: {containers: 7}}}\n",
        "scalar.yaml": b"42\n",
        "list.json": b"[1, 2, 3]",
        "string.json": b'"apiVersion"',
        "docs.yaml": b"---\n---\n...\n",
        "comment.yaml": b"# only a comment\n",
    })
    # A Job of an unknown batch version is still a Job (its labels are read; containers: 7 is not).
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == [
        ("MLC102", "future-job.yaml", 5, 8,
         "Job t pod template lacks cost labels team, project, cost-center (required-tags); cost allocators "
         "read pod labels: add them to spec.template.metadata.labels")]


# -------------------------------------------------------- wrong types ---

JUNK = [["a", "list"], {"a": "map"}, None, 10**40, "NaN", float("inf"), -1, "", True]


def _gpu_documents() -> list[Path]:
    demo = FIXTURES / "demo"
    return [demo / "k8s" / "llama-sft-pytorchjob.yaml", demo / "k8s" / "nightly-eval-cronjob.yaml",
            demo / "k8s" / "ray-cluster.yaml", demo / "configs" / "sft.yaml", demo / "configs" / "ds_zero2.json",
            demo / "configs" / "vit-pretrain-lightning.yaml"]


@pytest.mark.parametrize("path", _gpu_documents(), ids=lambda p: p.name)
def test_wrong_type_at_every_key_path(path: Path, tmp_path: Path):
    """Each value a rule may read replaced by a list, a map, null, a huge
    integer, NaN, Inf, -1, "" or a boolean, one at a time, in one tree with
    the rest of the demo project so links are built from the junk too."""
    import yaml

    from fuzzing import _set, dump_document

    data = yaml.safe_load(path.read_bytes())
    demo = {str(p.relative_to(FIXTURES / "demo")): p.read_bytes() for p in seed_files(FIXTURES / "demo")
            if p.suffix in (".yaml", ".yml", ".json")}
    name = str(path.relative_to(FIXTURES / "demo"))
    root = tmp_path / "p"
    for i, key_path in enumerate(key_paths(data)):
        junk = JUNK[i % len(JUNK)]
        files = {**demo, name: dump_document(_set(data, key_path, junk), path.suffix == ".json")}
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        for rel, content in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(content)
        result = lint_tree(root)
        assert internal_errors(result) == [], (key_path, junk)


# ----------------------------------------------------------- encodings ---

def test_encodings_boms_nul_bytes_and_binary_files(tmp_path: Path):
    utf16 = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: utf16\n"
    result = lint_with_sentinel(tmp_path, {
        "utf16-le.yaml": b"\xff\xfe" + utf16.encode("utf-16-le"),
        "utf16-be.yaml": b"\xfe\xff" + utf16.replace("utf16", "utf16be").encode("utf-16-be"),
        "bom.yaml": b"\xef\xbb\xbf" + CONFIGMAP.replace(b"name: cm", b"name: bom"),
        "crlf.yaml": CONFIGMAP.replace(b"name: cm", b"name: crlf").replace(b"\n", b"\r\n"),
        "latin1.yaml": JOB + b"  annotations: {x: caf\xe9}\n",
        "mixed.yaml": JOB + b"  annotations: {x: caf\xc3\xa9, y: caf\xe9}\n",
        "bad-utf16.yaml": b"\xff\xfe" + b"a\x00p\x00" + b"\x00\xd8",
        "nul.yaml": JOB + b"\x00\x00",
        "random.tf": bytes(range(256)) * 4,
        "random.yaml": bytes(range(256)) * 4,
        "image.json": b"\x89PNG\r\n\x1a\n" + bytes(200),
        "lone-surrogate.yaml": JOB + b"  annotations: {x: \xed\xa0\x80}\n",
    })
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == [
        ("MLC001", "latin1.yaml", 5, 23, "cannot read file: not valid UTF-8 at byte 73"),
        ("MLC001", "lone-surrogate.yaml", 5, 20, "cannot read file: not valid UTF-8 at byte 70"),
        ("MLC001", "mixed.yaml", 5, 33, "cannot read file: not valid UTF-8 at byte 83"),
        ("MLC001", "nul.yaml", 5, 1, "cannot read file: binary content (NUL byte at offset 51)"),
        ("MLC001", "random.tf", 1, 1, "cannot read file: binary content (NUL byte at offset 0)"),
    ]
    assert sorted(cm.name for cm in result.project.kubernetes.config_maps) == ["bom", "crlf", "utf16", "utf16be"]
    skipped = {pf.path: pf.skipped_reason for pf in result.files if pf.skipped_reason}
    assert skipped == {"bad-utf16.yaml": "not valid UTF-16 at byte 6",
                       "image.json": "binary content (NUL byte at offset 8)",
                       "random.yaml": "binary content (NUL byte at offset 0)"}


@pytest.mark.parametrize("name", ["e.yaml", "e.yml", "e.json", "e.tf", "e.tfvars", "e.auto.tfvars",
                                  "e.tfvars.json", "ws.yaml", "newlines.tf"])
def test_empty_and_blank_files(name: str, tmp_path: Path):
    data = b"   \n\n\t\n" if name.startswith(("ws", "newlines")) else b""
    result = lint_with_sentinel(tmp_path, {name: data})
    assert only(result, name) == []


# ------------------------------------------------------------- sizes ---

@pytest.mark.parametrize("name", ["huge.yaml", "huge.json", "huge.tf", "huge.tf.json", "huge.tfvars"])
def test_100_mb_file_is_refused_unread(name: str, tmp_path: Path):
    (tmp_path / "huge").mkdir(parents=True)
    with open(tmp_path / "huge" / name, "wb") as fh:   # sparse: no 100 MB write
        fh.truncate(100_000_000)
    start = time.monotonic()
    result = lint_with_sentinel(tmp_path, {})
    assert time.monotonic() - start < 5
    assert only(result, f"huge/{name}") == [
        ("MLC001", f"huge/{name}", 1, 1, "file is 100.0 MB, over the 5.0 MB limit (max-file-size-mb); not parsed")]


def test_very_long_lines_parse_in_bounded_time(tmp_path: Path):
    big = b"a" * 4_000_000
    start = time.monotonic()
    result = lint_with_sentinel(tmp_path, {
        "long.json": b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l"}, "data": {"k": "'
                     + big + b'"}}',
        "long.yaml": CONFIGMAP.replace(b"name: cm", b"name: y") + b"data:\n  k: " + big + b"\n",
        "long.tf": b'locals {\n  x = "' + big[:1_000_000] + b'"\n}\n',
    })
    assert time.monotonic() - start < 30
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == []
    assert sorted(cm.name for cm in result.project.kubernetes.config_maps) == ["l", "y"]


DEEP = 10_000


def _deep_cases() -> dict[str, tuple[bytes, tuple[int, int, str]]]:
    n = DEEP
    return {
        "flow.yaml": (CONFIGMAP + b"data:\n  x: " + b"[" * n + b"]" * n + b"\n",
                      (6, 1004, "YAML syntax error: while increasing flow level exceeded maximum nesting depth")),
        "block.yaml": (CONFIGMAP + b"data:\n  x:\n    " + b"- " * n + b"1\n",
                       (7, 1999, "YAML syntax error: while increasing block level exceeded maximum nesting depth")),
        "mapping.yaml": (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                         + b"".join(b" " * (i + 1) + b"a:\n" for i in range(600)) + b" " * 601 + b"b: 1\n",
                         (504, 502, "nesting deeper than 500 levels (max-nesting-depth)")),
        "deep.json": (b'{"apiVersion":"v1","kind":"ConfigMap","data":' + b'{"a":' * n + b"1" + b"}" * n + b"}",
                      (1, 1, "nesting deeper than 500 levels (max-nesting-depth)")),
        "deep.tf.json": (b'{"locals":' + b'{"a":' * n + b"1" + b"}" * n + b"}",
                         (1, 1, "nesting deeper than 500 levels (max-nesting-depth)")),
        "list.tf": (b"locals {\n  x = " + b"[" * n + b"1" + b"]" * n + b"\n}\n", (2, 506, "nesting deeper than 500 levels (max-nesting-depth)")),
        "object.tf": (b"locals {\n  x = " + b"{a = " * n + b"1" + b"}" * n + b"\n}\n", (2, 2502, "nesting deeper than 500 levels (max-nesting-depth)")),
        "blocks.tf": (b"".join(b"b%d {\n" % i for i in range(n)) + b"}\n" * n, (501, 6, "nesting deeper than 500 levels (max-nesting-depth)")),
        "parens.tf": (b"locals {\n  x = " + b"(" * n + b"1" + b")" * n + b"\n}\n", (2, 506, "nesting deeper than 500 levels (max-nesting-depth)")),
        "operators.tf": (b"locals {\n  x = " + b"1 + " * n + b"1\n}\n", (1, 1, "nesting too deep")),
    }


@pytest.mark.parametrize("name", sorted(_deep_cases()))
def test_10000_levels_of_nesting(name: str, tmp_path: Path):
    data, (line, column, message) = _deep_cases()[name]
    start = time.monotonic()
    result = lint_with_sentinel(tmp_path, {name: data})
    assert time.monotonic() - start < 15
    assert only(result, name) == [("MLC001", name, line, column, message)]


def test_alias_bombs_are_refused_without_expanding(tmp_path: Path):
    laughs = b"".join(b"a%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a%d" % (i - 1)] * 10)) for i in range(1, 12))
    start = time.monotonic()
    result = lint_with_sentinel(tmp_path, {
        "bomb.yaml": CONFIGMAP + b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + laughs,
        "merge-bomb.yaml": CONFIGMAP + b"m0: &m0 {a: 1, b: 2}\n" + b"".join(
            b"m%d: &m%d {<<: [*m%d, *m%d], k%d: [*m%d, *m%d, *m%d, *m%d]}\n" % ((i, i) + (i - 1,) * 2 + (i,)
                                                                             + (i - 1,) * 4) for i in range(1, 30)),
        "recursive.yaml": CONFIGMAP.replace(b"metadata:\n  name: cm\n", b"metadata: &m {name: r, self: *m}\n"),
    })
    assert time.monotonic() - start < 10
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == [
        ("MLC001", "bomb.yaml", 1, 1, "document expands to more than 2000000 nodes through aliases; refused"),
        ("MLC001", "merge-bomb.yaml", 1, 1, "document expands to more than 2000000 nodes through aliases; refused"),
    ]


def test_cyclic_documents_from_recursive_anchors(tmp_path: Path):
    """A recursive anchor makes the data cyclic: every reader and rule that
    walks it (and the cache pickler) must stop."""
    job = (b"apiVersion: batch/v1\nkind: Job\nmetadata: &meta\n  name: cyc\n  labels: &l {team: *l}\n"
           b"spec: &spec\n  backoffLimit: *spec\n  template: &t\n    metadata: *meta\n    spec:\n"
           b"      nodeSelector: *t\n      containers: &c\n        - name: main\n          image: busybox\n"
           b"          command: *c\n          args: [*c, *t]\n          env: *c\n          resources: &r\n"
           b"            limits: {nvidia.com/gpu: *r}\n            requests: *r\n")
    training = (b"per_device_train_batch_size: &a [*a]\ngradient_accumulation_steps: *a\n"
                b"learning_rate: &b {x: *b}\ndeepspeed: &d {zero_optimization: *d}\noutput_dir: *b\n")
    outcome = check_tree(_tree(tmp_path / "p", {"cyc.yaml": job, "train.yaml": training, SENTINEL_NAME: SENTINEL}))
    assert outcome.problems == []
    result = lint_tree(tmp_path / "p", cache_dir=tmp_path / "cache")   # pickled into the cache
    again = lint_tree(tmp_path / "p", cache_dir=tmp_path / "cache")    # and read back
    assert findings_of(result) == findings_of(again)


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


# ---------------------------------------------------- unsafe YAML tags ---

def test_python_tags_are_refused_and_never_constructed(tmp_path: Path, monkeypatch):
    ran: list[str] = []
    monkeypatch.setattr(os, "system", lambda cmd: ran.append(cmd) or 0)
    marker = tmp_path / "PWNED"
    result = lint_with_sentinel(tmp_path / "p", {
        "apply.yaml": JOB + f"spec: !!python/object/apply:os.system ['touch {marker}']\n".encode(),
        "name.yaml": b"per_device_train_batch_size: !!python/name:os.system\n",
        "new.json.yaml": JOB + b"spec: !!python/object/new:subprocess.Popen [[touch, x]]\n",
        "module.yaml": JOB + b"metadata: !!python/module:os\n",
        "custom.yaml": JOB + b"spec: !Ref SomeParameter\n",
    })
    assert not marker.exists() and ran == []
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == [
        ("MLC001", "apply.yaml", 5, 7, "unsafe YAML tag '!!python/object/apply:os.system' refused"),
        ("MLC001", "module.yaml", 5, 11, "unsafe YAML tag '!!python/module:os' refused"),
        ("MLC001", "name.yaml", 1, 30, "unsafe YAML tag '!!python/name:os.system' refused"),
        ("MLC001", "new.json.yaml", 5, 7, "unsafe YAML tag '!!python/object/new:subprocess.Popen' refused"),
    ]


# ------------------------------------------------ the file system ---

def test_symlink_loops_and_links_outside_the_tree_are_not_followed(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_bytes(JOB + b"spec: {template: {spec: {containers: []}}}\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "a").mkdir()
    (root / "a" / "up").symlink_to(root / "a", target_is_directory=True)
    (root / "out-dir").symlink_to(outside, target_is_directory=True)
    (root / "out-file.yaml").symlink_to(outside / "secret.yaml")
    (root / "passwd.yaml").symlink_to("/etc/passwd")
    (root / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    result = lint_with_sentinel(root, {})
    assert sorted(pf.path for pf in result.files if pf.path) == [SENTINEL_NAME]


def test_fifos_and_devices_are_never_opened(tmp_path: Path):
    """A FIFO named like a manifest would block the read forever."""
    root = tmp_path / "root"
    (root / "k8s").mkdir(parents=True)
    os.mkfifo(root / "k8s" / "pipe.yaml")
    start = time.monotonic()
    result = lint_with_sentinel(root, {})
    assert time.monotonic() - start < 10
    assert sorted(pf.path for pf in result.files if pf.path) == [SENTINEL_NAME]
    # Named explicitly: a clear finding, still not opened.
    explicit = lint_tree(root, paths=["k8s/pipe.yaml", SENTINEL_NAME])
    assert findings_of(explicit, "k8s/pipe.yaml") == [
        ("MLC001", "k8s/pipe.yaml", 1, 1, "not a regular file or folder; not read")]


def _deny(monkeypatch, denied: Path) -> None:
    """Simulate a permission error (tests run as root, where chmod 000 does
    not stop reads): opening ``denied`` for reading raises EACCES."""
    real_open = Path.open

    def fake_open(self, *args, **kwargs):
        if Path(os.path.abspath(self)) == denied:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    real_os_open = os.open

    def fake_os_open(path, flags, *args, **kwargs):
        # Files are read through os.open (non-blocking, fstat-checked: mlcost_lint.safe_io).
        if Path(os.path.abspath(path)) == denied:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(Path, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)


def test_unreadable_file_is_a_clear_finding(tmp_path: Path, monkeypatch):
    root = tmp_path / "root"
    (root / "k8s").mkdir(parents=True)
    locked = root / "k8s" / "locked.yaml"
    locked.write_bytes(JOB)
    if os.geteuid() == 0:
        _deny(monkeypatch, locked.resolve())
    else:  # pragma: no cover - not root: the real thing
        locked.chmod(0)
    result = lint_with_sentinel(root, {})
    assert only(result, "k8s/locked.yaml") == [
        ("MLC001", "k8s/locked.yaml", 1, 1, "cannot read file: Permission denied")]


def test_unreadable_directory_is_a_clear_finding(tmp_path: Path, monkeypatch):
    root = tmp_path / "root"
    (root / "private").mkdir(parents=True)
    (root / "private" / "job.yaml").write_bytes(JOB)
    if os.geteuid() == 0:
        real_scandir = os.scandir
        denied = os.path.join(".", "private")

        def fake_scandir(path="."):
            if os.fspath(path) == denied:
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", fake_scandir)
    else:  # pragma: no cover
        (root / "private").chmod(0)
    result = lint_with_sentinel(root, {})
    assert only(result, "private") == [("MLC001", "private", 1, 1, "cannot read directory: Permission denied")]


def test_files_that_vanish_during_the_scan_are_skipped(tmp_path: Path, monkeypatch):
    import mlcost_lint.pipeline as pipeline

    root = tmp_path / "root"
    (root / "k8s").mkdir(parents=True)
    (root / "k8s" / "gone.yaml").write_bytes(JOB)
    (root / "k8s" / "gone.tf").write_bytes(b'resource "aws_instance" "x" {}\n')
    real_discover = pipeline.discover

    def discover_then_delete(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        (root / "k8s" / "gone.yaml").unlink()
        (root / "k8s" / "gone.tf").unlink()
        return found

    monkeypatch.setattr(pipeline, "discover", discover_then_delete)
    result = lint_with_sentinel(root, {})
    assert {pf.path: pf.skipped_reason for pf in result.files if pf.skipped_reason} == {
        "k8s/gone.tf": "file vanished during the scan", "k8s/gone.yaml": "file vanished during the scan"}
    assert [f for f in findings_of(result) if f[1] != SENTINEL_NAME] == []


def test_missing_path_and_stdin_garbage(tmp_path: Path):
    root = _tree(tmp_path / "root", {SENTINEL_NAME: SENTINEL})
    result = lint_tree(root, paths=[".", "no/such/dir", "-"], stdin=b"\x00\x01binary" * 100)
    assert findings_of(result, "no/such/dir") == [("MLC001", "no/such/dir", 1, 1, "path does not exist")]
    assert internal_errors(result) == []


def test_stdin_over_the_size_limit_is_refused_through_the_cli(tmp_path: Path):
    from mlc_testing import run_cli

    data = CONFIGMAP + b"data:\n  a: " + b"x" * 6_000_000 + b"\n"
    r = run_cli("-", "--format", "json", "--no-cache", stdin=data, cwd=tmp_path)
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(r.out)["findings"]]
    assert found == [("MLC001", "stdin", 1, "file is 6.0 MB, over the 5.0 MB limit (max-file-size-mb); not parsed")]


def test_stdin_over_the_size_limit_is_refused(tmp_path: Path):
    data = CONFIGMAP + b"data:\n  a: " + b"x" * 6_000_000 + b"\n"
    result = lint_tree(_tree(tmp_path / "r", {}), paths=["-"], stdin=data)
    assert findings_of(result) == [
        ("MLC001", "stdin", 1, 1, "file is 6.0 MB, over the 5.0 MB limit (max-file-size-mb); not parsed")]


def test_real_cli_on_a_tree_of_every_hostile_class(tmp_path: Path):
    """The installed entry point, once, over a tree mixing the classes above:
    exit 1 (MLC001 errors), no traceback, parseable SARIF."""
    import json

    from mlc_testing import run_cli

    root = _tree(tmp_path / "root", {
        SENTINEL_NAME: SENTINEL,
        "bin.tf": bytes(range(256)),
        "tabs.yaml": JOB + b"spec:\n\ttemplate: {}\n",
        "py.yaml": JOB + b"spec: !!python/object/apply:os.system ['echo pwned']\n",
        "deep.json": b'{"apiVersion":"v1","kind":"ConfigMap","data":' + b"[" * 10_000 + b"]" * 10_000 + b"}",
        "bomb.yaml": CONFIGMAP + b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
            b"a%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a%d" % (i - 1)] * 10)) for i in range(1, 12)),
        "empty.tf": b"",
    })
    with open(root / "huge.yaml", "wb") as fh:
        fh.truncate(100_000_000)
    (root / "loop").symlink_to(root, target_is_directory=True)
    os.mkfifo(root / "pipe.yaml")
    r = run_cli(".", "--format", "sarif", "--no-cache", cwd=root, timeout=60)
    assert r.code == 1, r.err
    assert "Traceback" not in r.err and "internal error" not in r.err
    results = json.loads(r.out)["runs"][0]["results"]
    assert sorted((x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
                  for x in results) == [
        ("MLC001", "bin.tf"), ("MLC001", "bomb.yaml"), ("MLC001", "deep.json"), ("MLC001", "huge.yaml"),
        ("MLC001", "py.yaml"), ("MLC001", "tabs.yaml"), ("MLC204", SENTINEL_NAME)]


def test_settings_defaults_are_the_documented_bounds():
    s = Settings()
    assert (s.max_file_size_mb, s.max_nesting_depth, s.max_evaluation_steps) == (5.0, 500, 2_000_000)
