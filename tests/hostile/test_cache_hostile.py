"""A committed parse cache can do nothing (issue 16, items 1-4): no link in
the cache is followed, entries are read bounded and only from regular
files, loading an entry never runs code, and the signing key never comes
from the scanned tree or is shorter than 32 bytes. Each way is tried
through the real CLI on a repository that commits the hostile cache, whose
output must equal an uncached run."""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from mlcost_lint import __version__
from mlcost_lint import cache as cache_module
from mlcost_lint.cache import DEFAULT_DIR, KEY_BYTES, CacheUnavailable, ParseCache, load_payload
from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind, ParsedFile

ROOT = Path(__file__).resolve().parents[2]
VERSION_DIR = f"v{__version__}"
JOB = b"""apiVersion: batch/v1
kind: Job
metadata:
  name: trainer
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          resources:
            limits:
              nvidia.com/gpu: 1
"""


class _RunsCode:
    """Unpickling this calls os.mkdir(marker): what an attacker's entry does."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k8s").mkdir()
    (repo / "k8s" / "job.yaml").write_bytes(JOB)
    return repo


def _run(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "mlcost_lint", ".", "--format", "json", "--exit-zero", *args],
                          cwd=repo, capture_output=True, timeout=120, env=env)


def _uncached(repo: Path, home: Path) -> bytes:
    out = _run(repo, "--no-cache", home=home)
    assert out.returncode == 0 and b'"MLC204"' in out.stdout, out.stderr
    return out.stdout


def _one_refusal(stderr: bytes, why: str) -> None:
    lines = [ln for ln in stderr.decode().splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("mlcost-lint: running without the parse cache: ") and why in lines[0], lines


def _entry_paths(repo: Path) -> list[Path]:
    return sorted((repo / DEFAULT_DIR / VERSION_DIR).glob("*/*.pkl"))


def _signed(secret: bytes, key: str, payload: bytes) -> bytes:
    return hmac.new(secret, key.encode() + payload, hashlib.sha256).digest() + payload


def test_cache_root_that_is_a_link_is_refused_and_its_target_untouched(tmp_path: Path):
    repo, home = _repo(tmp_path), tmp_path / "home"
    outside = tmp_path / "outside"
    (outside / "v0.0.1").mkdir(parents=True)
    (outside / "v0.0.1" / "keep.txt").write_text("the next CI step's files")
    (repo / DEFAULT_DIR).symlink_to(outside)
    expected = _uncached(repo, home)
    run = _run(repo, home=home)
    assert run.returncode == 0 and run.stdout == expected
    _one_refusal(run.stderr, f"{DEFAULT_DIR} is a symbolic link")
    assert sorted(p.name for p in outside.rglob("*")) == ["keep.txt", "v0.0.1"]


def test_a_link_in_a_folder_above_the_cache_is_refused(tmp_path: Path):
    repo, home = _repo(tmp_path), tmp_path / "home"
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "build").symlink_to(outside)
    expected = _uncached(repo, home)
    run = _run(repo, "--cache-dir", "build/cache", home=home)
    assert run.returncode == 0 and run.stdout == expected
    _one_refusal(run.stderr, "build is a symbolic link")
    assert list(outside.iterdir()) == []


def test_version_and_shard_folders_that_are_links_are_never_written_through(tmp_path: Path):
    repo, home = _repo(tmp_path), tmp_path / "home"
    expected = _uncached(repo, home)
    assert _run(repo, home=home).stdout == expected          # fills the cache
    shard = _entry_paths(repo)[0].parent
    # A committed cache: the shard folder is a link to a folder outside.
    outside_shard, outside_version, outside_old = (tmp_path / n for n in ("shard", "version", "old"))
    for folder in (outside_shard, outside_version, outside_old):
        folder.mkdir()
        (folder / "keep.txt").write_text("keep")
    for p in shard.iterdir():
        p.unlink()
    shard.rmdir()
    shard.symlink_to(outside_shard)
    (repo / DEFAULT_DIR / "v0.0.1").symlink_to(outside_old)  # an "old version" folder: never rmtree'd through
    run = _run(repo, home=home)
    assert run.returncode == 0 and run.stdout == expected and run.stderr == b""
    assert [p.name for p in outside_shard.iterdir()] == ["keep.txt"]
    assert [p.name for p in outside_old.iterdir()] == ["keep.txt"]
    # The version folder itself is a link: replaced by a real folder, the target untouched.
    version = repo / DEFAULT_DIR / VERSION_DIR
    import shutil

    shutil.rmtree(version)
    version.symlink_to(outside_version)
    run = _run(repo, home=home)
    assert run.returncode == 0 and run.stdout == expected
    assert [p.name for p in outside_version.iterdir()] == ["keep.txt"]
    assert version.is_dir() and not version.is_symlink() and _entry_paths(repo)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "big"])
def test_entries_that_are_devices_fifos_links_or_huge_are_misses(target: str, tmp_path: Path):
    repo, home = _repo(tmp_path), tmp_path / "home"
    expected = _uncached(repo, home)
    assert _run(repo, home=home).stdout == expected
    for entry in _entry_paths(repo):
        entry.unlink()
        if target == "fifo":
            os.mkfifo(entry)
        elif target == "big":
            with entry.open("wb") as fh:   # sparse: over the entry bound without using the disk
                fh.truncate(200 * 1024 * 1024)
        else:
            entry.symlink_to(target)
    run = _run(repo, home=home)
    assert run.returncode == 0 and run.stdout == expected and run.stderr == b""


def test_entry_bound_is_checked_before_reading(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    cache = ParseCache(tmp_path / "cache", "t", base=tmp_path, max_entry_bytes=1000)
    small, big = cache.key(b"a", "a", "yaml"), cache.key(b"b", "b", "yaml")
    cache.put(small, ParsedFile(path="a", kind=FileKind.YAML))
    cache.put(big, ParsedFile(path="b" * 2000, kind=FileKind.YAML))
    assert cache.get(small).path == "a"
    assert cache.get(big) is None and not cache._path(big).exists()     # never written either
    payload = pickle.dumps(ParsedFile(path="b" * 2000, kind=FileKind.YAML))
    cache.writer().put_payload(big, payload)                            # a worker (or attacker) wrote it
    assert cache._path(big).stat().st_size > 1000 and cache.get(big) is None


@pytest.mark.parametrize("payload", [
    pickle.dumps(_RunsCode(Path("/nonexistent-marker"))),
    b"cbuiltins\neval\n(V__import__('os').system('true')\ntR.",
    b"cmlcost_lint.cache\nParseCache\n(V/tmp/x\nVy\ntR.",             # our class, but not a parse result
    b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x11mlcost_lint.cache\x8c\rshutil.rmtree\x93.",
    b"cposix\nsystem\n(Vtrue\ntR.",
    b"cmlcost_lint.parse.hcl\n_Converter\n)R.",                           # private helper class
])
def test_loading_never_resolves_anything_but_parse_result_classes(payload: bytes):
    with pytest.raises(pickle.UnpicklingError, match="is not a parse-result class"):
        load_payload(payload)


def test_a_validly_signed_entry_that_runs_code_is_a_miss(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    marker = tmp_path / "code-ran"
    cache = ParseCache(tmp_path / "cache", "t", base=tmp_path)
    key = cache.key(JOB, "job.yaml", "yaml")
    cache.writer().put_payload(key, pickle.dumps(_RunsCode(marker)))
    assert cache.get(key) is None and not marker.exists()


def test_every_fixture_and_corpus_parse_result_loads_through_the_restricted_unpickler():
    paths = [p for p in sorted((ROOT / "fixtures").rglob("*")) if p.is_file()
             and p.suffix in {".tf", ".tfvars", ".yaml", ".yml", ".json", ".hcl"}]
    assert len(paths) > 200
    for path in paths:
        kind = {".tf": FileKind.TERRAFORM, ".hcl": FileKind.TERRAFORM, ".tfvars": FileKind.TERRAFORM_VARS,
                ".json": FileKind.JSON}.get(path.suffix, FileKind.YAML)
        parsed = parse_bytes(path.read_bytes(), str(path), kind)
        assert load_payload(pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL)) == parsed, path


def test_key_inside_the_checkout_is_never_used(tmp_path: Path):
    """GitLab CI keeps only paths inside the project, so XDG_CACHE_HOME often
    points there: the repository can then commit both the key and an entry
    signed with it."""
    repo = _repo(tmp_path)
    home = repo / ".cache"
    marker = tmp_path / "code-ran"
    known = b"k" * KEY_BYTES
    (home / "mlcost-lint").mkdir(parents=True)
    (home / "mlcost-lint" / "cache.key").write_bytes(known)
    expected = _uncached(repo, tmp_path / "elsewhere")
    # The committed entry for k8s/job.yaml, signed with the committed key.
    settings = f"depth=500|size={5_000_000}"
    probe = ParseCache.__new__(ParseCache)
    probe.salt = f"{__version__}|{settings}".encode()
    key = ParseCache.key(probe, JOB, "k8s/job.yaml", "yaml")
    entry = repo / DEFAULT_DIR / VERSION_DIR / key[:2] / f"{key}.pkl"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(_signed(known, key, pickle.dumps(_RunsCode(marker))))
    run = _run(repo, home=home)
    assert run.returncode == 0 and run.stdout == expected
    _one_refusal(run.stderr, "inside the scanned tree")
    assert not marker.exists()
    # Scanning a subfolder: the key is still inside the checkout (first folder with .git).
    run = subprocess.run([sys.executable, "-m", "mlcost_lint", "k8s", "--format", "json", "--exit-zero"],
                         cwd=repo, capture_output=True, timeout=120,
                         env={**os.environ, "XDG_CACHE_HOME": str(home)})
    _one_refusal(run.stderr, "inside the scanned tree")
    assert not marker.exists()


def test_key_folder_inside_a_scan_root_raises(tmp_path: Path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    with pytest.raises(CacheUnavailable, match="inside the scanned tree"):
        ParseCache(tmp_path / "scan" / DEFAULT_DIR, "t", base=tmp_path, scan_roots=[tmp_path])


@pytest.mark.parametrize("stored", [b"", b"abc", b"x" * (KEY_BYTES - 1)])
def test_short_or_empty_key_file_is_replaced_never_used(stored: bytes, tmp_path: Path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    (home / "mlcost-lint").mkdir(parents=True)
    key_file = home / "mlcost-lint" / "cache.key"
    key_file.write_bytes(stored)
    # The fresh key is fixed, and begins with the stored bytes: a key kept or
    # padded from the short one would be equal to it or a prefix of it. (A
    # random key made this test fail 1 run in 256: one starting with 0xff.)
    fresh = (stored + b"\xff" * KEY_BYTES)[:KEY_BYTES]
    real_urandom = os.urandom
    monkeypatch.setattr(cache_module.os, "urandom", lambda n: fresh if n == KEY_BYTES else real_urandom(n))
    cache = ParseCache(tmp_path / "cache", "t", base=tmp_path)
    assert cache._key == fresh
    assert key_file.read_bytes() == fresh
    # An entry signed with the old short key (what an attacker could guess) is a miss.
    key = cache.key(JOB, "job.yaml", "yaml")
    cache._path(key).parent.mkdir(parents=True)
    cache._path(key).write_bytes(_signed(stored, key, pickle.dumps(ParsedFile(path="forged", kind=FileKind.YAML))))
    assert cache.get(key) is None


def test_key_file_that_is_a_link_is_refused(tmp_path: Path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    (home / "mlcost-lint").mkdir(parents=True)
    (tmp_path / "known").write_bytes(b"k" * KEY_BYTES)
    (home / "mlcost-lint" / "cache.key").symlink_to(tmp_path / "known")
    with pytest.raises(CacheUnavailable, match="is a symbolic link"):
        ParseCache(tmp_path / "cache", "t", base=tmp_path)
