"""Two more hostile-input targets (issue 16, "the long fuzz profile"):

- Terraform functions: random arguments (every value the evaluator can
  hold: None, UNKNOWN, bools, huge ints, inf/nan, format verbs, regexes,
  YAML/JSON text, nested lists/maps) to every function in
  ``mlcost_lint.model.terraform.functions.FUNCTIONS``, called as the
  evaluator calls them (a step budget in ``METER``, ``check_result`` after).
  A case fails when the call raises anything but the evaluator's own
  ``EvalError`` / ``BudgetExceeded``, returns something that is not a
  Terraform value, or takes longer than its time bound.
- Cache folders: a real project linted once with the cache, then its
  ``.mlcost_lint_cache`` rearranged at random (entries replaced by junk,
  truncated or by pickles that would write a marker file, by symbolic links
  to a file or folder outside the project or to /dev/zero, by FIFOs and
  folders; folders made links or unreadable; foreign version folders
  holding links). The next run must not raise, must give the findings of a
  run without the cache, must finish in time, must leave everything outside
  the project as it was and must never run the pickled code.

Used by tests/hostile/test_fuzz.py (a few examples) and bench/fuzz.py
(targets ``functions`` and ``cache``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import random
import shutil
import stat
import time
import traceback
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from fuzzing import TimeLimit, lint_tree, time_limit
from mlcost_lint.model.core import UNKNOWN

# -- Terraform functions ------------------------------------------------------

_FN_STRINGS = [
    "", " ", "a", "abc", "%s", "%d", "%v", "%q", "%#v", "%5.2f", "%1500000000s", "%.999999999f", "%*d", "%%",
    "%-10s|", "%[2]s", "%[99]d", "/(a|a)*$/", "/(a+)+b/", "/[/", "/a{999999}/", "/^.*$/", "(?i)x", "\\d+",
    "a" * 60 + "!", "\n" * 50, "\r\n", "\t", "${x}", "%{ if true }x%{ endif }", '{"a": [1, 2], "b": null}',
    "[1, 2", "a: &x [1, 2]\nb: *x\n", "- 1\n- 2\n", "!!python/object:os.system ls", "1.5", "-0", "1e999",
    "0x1F", "NaN", "inf", "true", "null", "²", "٣", "\ud800", "\x00", "\u200b", "aGVsbG8=", "not base64!",
    "10.0.0.0/8", "us-east-1", "a,b,,c", ",", "..", "/", "s3://b/k",
]
_FN_STR = st.one_of(st.sampled_from(_FN_STRINGS), st.text(max_size=20))
_FN_INT = st.one_of(st.sampled_from([0, 1, -1, 2, 3, 7, 20000, 10**6, 2**31, 2**63, -(2**63), 10**300,
                                     10**4000, -(10**4000)]), st.integers(-5, 100))
_FN_FLOAT = st.sampled_from([0.5, -0.5, 1e308, -1e308, 1e-320, float("inf"), float("-inf"), float("nan"), 2.5])
_FN_SCALAR = st.one_of(st.none(), st.just(UNKNOWN), st.booleans(), _FN_INT, _FN_FLOAT, _FN_STR)


def tf_value() -> st.SearchStrategy[Any]:
    """A value the evaluator can hold (values.py: str, int/float, bool,
    None, list, dict with string keys, UNKNOWN)."""
    return st.recursive(
        _FN_SCALAR,
        lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_FN_STR, inner, max_size=4),
                                st.builds(lambda n, v: [v] * n, st.integers(0, 3000), inner)),
        max_leaves=10,
    )


def function_names() -> list[str]:
    from mlcost_lint.model.terraform.functions import FUNCTIONS

    return sorted(FUNCTIONS)


def function_call() -> st.SearchStrategy[tuple[str, list]]:
    return st.tuples(st.sampled_from(function_names()), st.lists(tf_value(), max_size=4))


def _not_a_value(value: Any) -> str | None:
    """What in ``value`` is not a Terraform value, or None. Each distinct
    list or map is looked at once and at most 200,000 in all: arguments
    share sub-values (``[[x] * 3000] * 3000``), and walking every path of
    such a value took minutes in this oracle, not in the function."""
    seen: set[int] = set()
    stack = [value]
    while stack and len(seen) < 200_000:
        v = stack.pop()
        if v is UNKNOWN or v is None or isinstance(v, (bool, int, float, str)):
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            for k in v:
                if not isinstance(k, str):
                    return f"a map key of type {type(k).__name__}"
            stack.extend(v.values())
        else:
            return f"a {type(v).__name__}"
    return None


def check_function_call(name: str, args: list, time_s: float = 3.0) -> list[str]:
    """Problems of one call (empty: fine)."""
    from mlcost_lint.model.terraform.budget import Budget
    from mlcost_lint.model.terraform.evaluator import DEEP_FUNCTIONS
    from mlcost_lint.model.terraform.functions import FUNCTIONS
    from mlcost_lint.model.terraform.limits import METER, BudgetExceeded, check_result
    from mlcost_lint.model.terraform.values import EvalError

    budget = Budget(2_000_000)
    METER.use(budget)
    started = time.monotonic()
    try:
        with time_limit(time_s):
            if name in DEEP_FUNCTIONS:   # as the evaluator does: deep arguments cost their size first
                for a in args:
                    budget.walk(a)
            result = FUNCTIONS[name](*args)
            check_result(f"{name}()", result)
            bad = _not_a_value(result)
    except (EvalError, BudgetExceeded):
        return []
    except TimeLimit:
        return [f"{_call_text(name, args)} ran over {time_s:g} s"]
    except Exception:  # noqa: BLE001 - what the oracle is for
        return [f"{_call_text(name, args)} raised:\n{traceback.format_exc()}"]
    finally:
        METER.use(None)
    if bad:
        return [f"{_call_text(name, args)} returned {bad}, not a Terraform value"]
    if time.monotonic() - started > time_s:
        return [f"{_call_text(name, args)} took {time.monotonic() - started:.1f} s"]
    return []


def _call_text(name: str, args: list) -> str:
    return f"{name}({', '.join(_short(a) for a in args)})"


def _short(value: Any) -> str:
    """A bounded repr: arguments can share sub-values thousands of times."""
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxdict, r.maxstring, r.maxother, r.maxlong = 4, 6, 4, 60, 60, 60
    return r.repr(value)


# -- cache folders ------------------------------------------------------------

CACHE = ".mlcost_lint_cache"
PROJECT = {
    "k8s/job.yaml": b"apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n"
                    b"      restartPolicy: Never\n      containers:\n      - name: m\n        image: i\n"
                    b"        resources: {limits: {nvidia.com/gpu: 8}}\n",
    "infra/main.tf": b'resource "aws_instance" "gpu" {\n  instance_type = "p4d.24xlarge"\n}\n'
                     b'resource "aws_cloudwatch_log_group" "logs" {\n  name = "x"\n}\n',
    "configs/train.json": b'{"output_dir": "out", "save_strategy": "steps", "save_steps": 10, "bf16": true}\n',
}


class _Marker:
    """A pickle that would create ``path`` when loaded (it must never be)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _snapshot(folder: Path) -> dict[str, str]:
    """Every path below ``folder`` with its kind and content hash (no link followed)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st_ = os.lstat(p)
            if stat.S_ISREG(st_.st_mode):
                out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st_.st_mode):
                out[str(p.relative_to(folder))] = "link " + os.readlink(p)
            else:
                out[str(p.relative_to(folder))] = f"mode {stat.S_IFMT(st_.st_mode)}"
    return out


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.pkl") if p.is_file() and not p.is_symlink())


def scramble_cache(cache: Path, outside: Path, marker: Path, rng: random.Random, rounds: int) -> list[str]:
    """Rearrange ``cache`` at random; return what was done."""
    done: list[str] = []
    target_file = outside / "secret.txt"
    target_dir = outside / "precious"
    for _ in range(rounds):
        entries = _entries(cache)
        folders = sorted(p for p in cache.rglob("*") if p.is_dir() and not p.is_symlink())
        op = rng.choice(["junk", "truncate", "flip", "pickle", "marker", "link_file", "link_dir", "dev_zero",
                         "fifo", "folder", "chmod", "signed_marker", "link_shard", "link_version", "foreign_version",
                         "link_root", "huge", "empty", "link_meta"])
        entry = rng.choice(entries) if entries else None
        try:
            if op in ("junk", "truncate", "flip", "pickle", "marker", "signed_marker", "huge", "empty") \
                    and entry is not None:
                data = entry.read_bytes()
                if op == "junk":
                    data = rng.randbytes(rng.randint(1, 300))
                elif op == "truncate":
                    data = data[:rng.randint(0, max(len(data) - 1, 0))]
                elif op == "flip" and data:
                    i = rng.randrange(len(data))
                    data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
                elif op == "pickle":   # a well-formed pickle of a harmless object, signed with nothing
                    data = rng.randbytes(32) + pickle.dumps({"path": "forged"})
                elif op == "marker":   # the signature left in place, the payload one that runs code
                    data = data[:32] + pickle.dumps(_Marker(str(marker)))
                elif op == "signed_marker":   # even signed with the user's own key: no code runs
                    secret = (marker.parent.parent / "home" / "mlcost-lint" / "cache.key").read_bytes()[:32]
                    payload = pickle.dumps(_Marker(str(marker)))
                    data = hmac.new(secret, entry.stem.encode() + payload, hashlib.sha256).digest() + payload
                elif op == "huge":
                    data = data[:32] + b"\0" * (20 << 20)
                else:
                    data = b""
                entry.write_bytes(data)
                done.append(f"{op} {entry.relative_to(cache)}")
            elif op in ("link_file", "dev_zero", "fifo", "folder") and entry is not None:
                entry.unlink()
                if op == "link_file":
                    entry.symlink_to(target_file)
                elif op == "dev_zero":
                    entry.symlink_to("/dev/zero")
                elif op == "fifo":
                    os.mkfifo(entry)
                else:
                    entry.mkdir()
                done.append(f"{op} {entry.relative_to(cache)}")
            elif op == "link_dir" and entry is not None:
                entry.unlink()
                entry.symlink_to(target_dir)
                done.append(f"link_dir {entry.relative_to(cache)}")
            elif op == "chmod" and folders:
                f = rng.choice(folders)
                f.chmod(rng.choice([0o000, 0o100, 0o400, 0o500]))
                done.append(f"chmod {f.relative_to(cache)}")
            elif op == "link_shard" and folders:
                shards = [f for f in folders if len(f.name) == 2]
                if shards:
                    f = rng.choice(shards)
                    shutil.rmtree(f)
                    f.symlink_to(target_dir, target_is_directory=True)
                    done.append(f"link_shard {f.relative_to(cache)}")
            elif op == "link_version":
                versions = [f for f in cache.iterdir() if f.name.startswith("v") and f.is_dir()
                            and not f.is_symlink()]
                if versions:
                    f = rng.choice(versions)
                    shutil.rmtree(f)
                    f.symlink_to(target_dir, target_is_directory=True)
                    done.append(f"link_version {f.name}")
            elif op == "foreign_version":
                f = cache / rng.choice(["v0.0.1", "v9.9.9", "v1"])
                if f.is_symlink():   # an earlier link_version: never write through our own link
                    f.unlink()
                f.mkdir(exist_ok=True)
                (f / "ab").mkdir(exist_ok=True)
                (f / "ab" / "outside").symlink_to(target_dir, target_is_directory=True)
                (f / "file-link").symlink_to(target_file)
                done.append(f"foreign_version {f.name}")
            elif op == "link_root":
                if cache.exists() and not cache.is_symlink():
                    _make_writable(cache)
                    shutil.rmtree(cache)
                    cache.symlink_to(target_dir, target_is_directory=True)
                    done.append("link_root")
                    break   # nothing more to rearrange inside
            elif op == "link_meta":
                name = rng.choice(["CACHEDIR.TAG", ".gitignore"])
                (cache / name).unlink(missing_ok=True)
                (cache / name).symlink_to(target_file)
                done.append(f"link_meta {name}")
        except OSError as exc:
            done.append(f"({op} failed: {exc})")
    return done


def _make_writable(folder: Path) -> None:
    for dirpath, dirnames, _ in os.walk(folder, followlinks=False):
        for name in dirnames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                p.chmod(0o700)
    if not folder.is_symlink():
        folder.chmod(0o700)


def _findings(result: Any) -> list[tuple]:
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]


def _cache_hits(root: Path, cache: Path) -> int:
    """Parse results a run takes from the cache (ParseCache.get returning one)."""
    from mlcost_lint.cache import ParseCache

    from mlcost_lint.parse.document import ParsedFile

    real_get, hits = ParseCache.get, [0]

    def counting_get(self: Any, key: str) -> Any:
        value = real_get(self, key)
        # evaluated Terraform roots (and their manifests) are entries too: count files only
        hits[0] += isinstance(value, ParsedFile)
        return value

    ParseCache.get = counting_get
    try:
        lint_tree(root, cache_dir=cache)
    finally:
        ParseCache.get = real_get
    return hits[0]


def check_cache_case(work: Path, rng: random.Random, rounds: int, time_s: float = 30.0) -> tuple[list[str], list[str]]:
    """One case in ``work`` (emptied first): (problems, what was done)."""
    if work.exists():
        _make_writable(work)
        shutil.rmtree(work)
    root, outside, home = work / "project", work / "outside", work / "home"
    for name, data in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (outside / "precious" / "ab").mkdir(parents=True)
    (outside / "precious" / "keep.txt").write_text("keep")
    (outside / "precious" / "vdata").mkdir()
    (outside / "secret.txt").write_text("TOP SECRET " * 10)
    marker = outside / "pwned"
    old_home = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home)   # the signing key: outside the project, as in use
    problems: list[str] = []
    done: list[str] = []
    try:
        expected = _findings(lint_tree(root))
        cache = root / CACHE
        lint_tree(root, cache_dir=cache)
        # The entries scrambled below are the ones a run looks up: a run on
        # the untouched cache takes every file from it (else the case would
        # test nothing but misses).
        hits = _cache_hits(root, cache)
        if hits != len(PROJECT):
            problems.append(f"a run on the filled cache hit {hits} of {len(PROJECT)} entries")
        before = _snapshot(outside)
        done = scramble_cache(cache, outside, marker, rng, rounds)
        for attempt in (1, 2):   # the second run reads what the first one rewrote
            started = time.monotonic()
            try:
                with time_limit(time_s):
                    got = _findings(lint_tree(root, cache_dir=cache))
            except TimeLimit:
                problems.append(f"run {attempt} over {time_s:g} s")
                break
            except Exception:  # noqa: BLE001 - what the oracle is for
                problems.append(f"run {attempt} raised:\n{traceback.format_exc()}")
                break
            if got != expected:
                problems.append(f"run {attempt}: findings differ from a run without the cache:\n"
                                f"  expected {expected}\n  got {got}")
            if time.monotonic() - started > time_s:
                problems.append(f"run {attempt} took {time.monotonic() - started:.1f} s")
        if marker.exists():
            problems.append("a cache entry ran code (the marker file exists)")
        after = _snapshot(outside)
        if after != before:
            changed = sorted(set(before.items()) ^ set(after.items()))
            problems.append(f"outside the project changed: {changed}")
    finally:
        if old_home is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old_home
    return problems, done

