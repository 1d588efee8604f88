"""Gate for the incremental whole run (mlcost_lint/incremental.py): after
files change, a run with the cache must print what a run with no cache
prints. Not part of the test suite (it takes minutes); run it on real trees:

    python bench/incremental_check.py TREE [TREE ...] [--rounds 8] [--files 3] [--seed 1]

For each tree: one run fills an empty cache; then, for each round, some
random .tf / .yaml / .yml / .json / .sh files are changed, cumulatively (a
comment appended, a comment or a suppression at the end of a line, or one
digit of a line changed, which changes values: GPU counts, sizes, regions,
retention days; or a parse error), and
``mlcost-lint check TREE --format json`` with the cache is compared with
the same run with ``--no-cache``. With ``--hooks``, each changed file is
first linted alone with the project as context, as the pre-commit hook
does (a sliced run that updates the index); with ``--compare-hooks`` too,
each hook's output is compared with the same hook's with ``--no-cache``
(a difference counts as one; on a tree of 5,000 files or more the hook's
stats come from a helper process: probe_ahead.MIN_FILES). With ``--add``, each round also
adds a copy of a .yaml/.yml file beside it (a new manifest or config with
the original's names; the hook, with ``--hooks``, is run on it too); with
``--remove``, it removes one. With ``--rewrite``, each change is written as
git checkout writes a file (deleted, then written again: its folder's
stamp moves, its listing does not; discover_cache). Every file is restored, and every added one
removed, at the end. It
reports every difference and how many cached runs were incremental (the
run says so on stderr when _MLCOST_LINT_TRACE_INCREMENTAL is set); exit 1
on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SUFFIXES = (".tf", ".yaml", ".yml", ".json", ".sh", ".tfvars")


def _tool() -> list[str]:
    script = Path(sys.executable).parent / "mlcost-lint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcost_lint"]


def lint(tree: Path, cache: Path | None) -> tuple[str, float, bool]:
    """The JSON output, the wall time, and whether the run was incremental."""
    import time

    cmd = [*_tool(), "check", ".", "--format", "json", "--exit-zero"]
    cmd += ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    start = time.perf_counter()
    env = {**os.environ, "_MLCOST_LINT_TRACE_INCREMENTAL": "1"}
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=900, env=env)
    took = time.perf_counter() - start
    incremental = "incremental run" in proc.stderr
    if proc.returncode not in (0, 1):
        return f"exit {proc.returncode}: {proc.stderr[-2000:]}", took, incremental
    return proc.stdout, took, incremental


def _write(path: Path, text: str, rewrite: bool) -> None:
    if rewrite:     # as git checkout writes a file: deleted, then written again (its folder's stamp moves)
        path.unlink()
    path.write_text(text)


def mutate(path: Path, rng: random.Random, i: int, rewrite: bool = False) -> None:
    data = path.read_bytes()
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return
    how = rng.random()
    lines = text.split("\n")
    digits = [(n, m.start()) for n, line in enumerate(lines) for m in re.finditer(r"\d", line)
              if not line.lstrip().startswith("#")]
    if how < 0.5 or not digits:
        if path.suffix == ".json":
            return
        filled = [n for n, line in enumerate(lines) if line.strip()]
        if how < 0.35 or not filled:
            _write(path, text + f"\n# incremental check {i}\n", rewrite)
            return
        # at the end of a line: a comment (a .tf file's tree stays as it was) or a suppression
        n = rng.choice(filled)
        lines[n] += rng.choice([f"  # incremental check {i}", "  # mlcost-lint: ignore"])
    elif how < 0.95:
        n, col = rng.choice(digits)
        line = lines[n]
        lines[n] = line[:col] + str(rng.choice([d for d in "0123456789" if d != line[col]])) + line[col + 1:]
    else:
        lines.insert(rng.randrange(len(lines) + 1), "{ [ unbalanced")
    _write(path, "\n".join(lines), rewrite)


def hook(tree: Path, cache: Path, path: Path, compare: bool = False) -> bool:
    """The pre-commit hook on ``path`` with the cache; ``compare``: whether it
    printed what the same hook prints with no cache (else True)."""
    cmd = [*_tool(), "check", str(path.relative_to(tree)), "--project-root", ".", "--exit-zero", "--format", "json"]
    cached = subprocess.run([*cmd, "--cache-dir", str(cache)], cwd=tree, capture_output=True, timeout=900)
    if not compare:
        return True
    fresh = subprocess.run([*cmd, "--no-cache"], cwd=tree, capture_output=True, timeout=900)
    if cached.stdout == fresh.stdout:
        return True
    print(f"    hook on {path.relative_to(tree)}: DIFFERENT from the hook with no cache")
    _explain(tree, cached.stdout.decode(), fresh.stdout.decode())
    return False


def check(tree: Path, rounds: int, per_round: int, rng: random.Random, hooks: bool = False,
          add: bool = False, remove: bool = False, rewrite: bool = False,
          compare_hooks: bool = False) -> tuple[int, int, int]:
    files = sorted(p for p in tree.rglob("*") if p.is_file() and p.suffix in SUFFIXES and ".git" not in p.parts
                   and not p.is_symlink())
    originals = {p: p.read_bytes() for p in files}
    cache = Path(tempfile.mkdtemp(prefix="inc-check-"))
    differences = incremental = 0
    added: list[Path] = []
    yaml_files = [p for p in files if p.suffix in (".yaml", ".yml")]
    try:
        lint(tree, cache)
        for r in range(rounds):
            changed = rng.sample(files, min(per_round, len(files)))
            if add and yaml_files:
                # a file added: a copy of a manifest or config beside it (same names as the original)
                source = rng.choice(yaml_files)
                copy = source.with_name(f"{source.stem}-added{r}{source.suffix}")
                if source.exists() and not copy.exists():
                    copy.write_bytes(source.read_bytes())
                    added.append(copy)
            if remove and yaml_files:
                # a file removed (restored at the end): a manifest or config others may have linked
                gone = rng.choice(yaml_files)
                if gone.exists() and gone not in changed:
                    gone.unlink()
            for p in changed:
                if not p.exists():
                    continue
                mutate(p, rng, r, rewrite)
                if hooks and not hook(tree, cache, p, compare_hooks):
                    differences += 1
            if hooks and added and added[-1].name.endswith(f"-added{r}{added[-1].suffix}") \
                    and not hook(tree, cache, added[-1], compare_hooks):
                differences += 1
            cached, t_cached, was_incremental = lint(tree, cache)
            fresh, t_fresh, _ = lint(tree, None)
            incremental += was_incremental
            same = cached == fresh
            if not same:
                differences += 1
                _explain(tree, cached, fresh)
            print(f"  round {r + 1}: {'same' if same else 'DIFFERENT'}"
                  f"{'  incremental' if was_incremental else ''}  cached {t_cached:.2f} s, "
                  f"no cache {t_fresh:.2f} s", flush=True)
    finally:
        for p, data in originals.items():
            p.write_bytes(data)
        for p in added:
            p.unlink(missing_ok=True)
        shutil.rmtree(cache, ignore_errors=True)
    return rounds, differences, incremental


def _explain(tree: Path, cached: str, fresh: str) -> None:
    try:
        a, b = json.loads(cached), json.loads(fresh)
    except ValueError:
        print(f"    {tree}: not JSON:\n{cached[:500]}\n{fresh[:500]}")
        return
    key = lambda f: json.dumps(f, sort_keys=True)   # noqa: E731
    fa, fb = {key(f) for f in a.get("findings", [])}, {key(f) for f in b.get("findings", [])}
    for f in sorted(fa - fb)[:5]:
        print(f"    only cached: {f[:400]}")
    for f in sorted(fb - fa)[:5]:
        print(f"    only no-cache: {f[:400]}")
    if fa == fb:
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                print(f"    field {k} differs: {str(a.get(k))[:300]} / {str(b.get(k))[:300]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--files", type=int, default=3, help="files changed per round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hooks", action="store_true", help="run the pre-commit hook on each changed file first")
    ap.add_argument("--compare-hooks", action="store_true",
                    help="with --hooks: each hook's output must be the same hook's with no cache")
    ap.add_argument("--add", action="store_true",
                    help="each round, also add a copy of a .yaml/.yml file beside it (removed at the end)")
    ap.add_argument("--remove", action="store_true",
                    help="each round, also remove a .yaml/.yml file (restored at the end)")
    ap.add_argument("--rewrite", action="store_true",
                    help="write each change as git checkout does: the file deleted, then written again")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    total = bad = incremental = 0
    for tree in args.trees:
        print(f"{tree}", flush=True)
        n, d, i = check(tree.resolve(), args.rounds, args.files, rng, args.hooks, args.add, args.remove,
                        args.rewrite, args.compare_hooks)
        total += n
        bad += d
        incremental += i
    print(f"{total} rounds, {bad} different, {incremental} incremental")
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
