"""Check that reporting one file gives exactly the whole run's findings in it.

    python bench/report_alone.py [REPO ...] [--per-repo 10] [--all-files] [--seed 1]
                                 [--touch [--touch-others N]] [--max-files N]

For each repository (default: every folder of ../shared/corpus and
../shared/corpus-v2), lint it whole with every rule selected, then lint it
again once per sampled file with only that file reported (what the
pre-commit hook does: ``LintOptions.report_paths``) and compare the findings
(code, path, line, column, message). Sampled: every file with a finding plus
``--per-repo`` others at random (``--all-files``: every file).

This is the gate for anything that makes a reporting run do less than the
whole run: skipping rules (``Rule.reports_in``), and a sliced project
context later. Runs through a cache per repository under /tmp, so a
repository's files are parsed once. Exit status 1 when any file differs.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def _key(f) -> tuple:
    return (f.code, f.location.path, f.location.line, f.location.column, f.message)


def check(repo: Path, per_repo: int, all_files: bool, rng: random.Random, cache_root: Path,
          touch: bool = False, max_files: int | None = None, others: int = 0) -> tuple[int, int, list[str]]:
    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    old = os.getcwd()
    os.chdir(repo)
    try:
        settings = Settings(root=repo, select=["ALL"])
        cache = cache_root / repo.name
        whole = lint(["."], settings, LintOptions(cache_dir=cache))
        by_path: dict[str, list] = {}
        for f in whole.findings:
            by_path.setdefault(f.location.path, []).append(_key(f))
        paths = sorted({pf.path for pf in whole.files if pf.path})
        if all_files:
            sample = paths
        else:
            sample = sorted(set(by_path) | set(rng.sample(paths, min(per_repo, len(paths)))))
        if max_files is not None and len(sample) > max_files:
            sample = sorted(rng.sample(sample, max_files))
        differences = []
        sliced = 0
        for path in sample:
            alone = lint(["."], settings, LintOptions(cache_dir=cache, report_paths=frozenset({path})))
            sliced += len(alone.files) < len(whole.files)
            got = [_key(f) for f in alone.findings]
            if got != by_path.get(path, []):
                differences.append(f"{repo.name}: {path}: {len(got)} findings reported alone, "
                                   f"{len(by_path.get(path, []))} in the whole run")
            if alone.secrets != whole.secrets:     # what reporters hide from printed source lines
                differences.append(f"{repo.name}: {path}: {len(alone.secrets)} secret values reported alone, "
                                   f"{len(whole.secrets)} in the whole run")
        if touch:
            touched, diff = _touched(repo, settings, cache, sample, others, rng)
            sliced += touched
            differences += diff
        return len(sample), sliced, differences
    finally:
        os.chdir(old)


_TOUCHABLE = (".yaml", ".yml", ".tf", ".sh", ".slurm", ".sbatch", ".tfvars")


def _touched(repo: Path, settings, cache: Path, sample: list[str], others: int = 0,
             rng: random.Random | None = None) -> tuple[int, list[str]]:
    """Each sampled file changed (a comment line appended, as the hook sees a
    file being committed): reported alone, then the whole run on the changed
    tree, compared; the file is restored after. ``others``: that many other
    files changed too, with no run between (the first hook after a pull)."""
    from mlcost_lint.pipeline import LintOptions, lint

    differences = []
    sliced = 0
    touchable = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.suffix in _TOUCHABLE
                       and p.is_file() and not p.is_symlink() and ".git" not in p.parts)
    for path in sample:
        file = repo / path
        if file.suffix not in _TOUCHABLE:
            continue
        pool = [p for p in touchable if p != path]
        changed = [repo / p for p in (rng.sample(pool, min(others, len(pool))) if others and rng else [])]
        before = {f: f.read_bytes() for f in changed}
        original = file.read_bytes()
        try:
            for other, data in before.items():
                other.write_bytes(data + (b"" if data.endswith(b"\n") else b"\n") + b"# report_alone pull\n")
            file.write_bytes(original + (b"" if original.endswith(b"\n") else b"\n") + b"# report_alone touch\n")
            alone = lint(["."], settings, LintOptions(cache_dir=cache, report_paths=frozenset({path})))
            whole = lint(["."], settings, LintOptions(cache_dir=cache))
            sliced += len(alone.files) < len(whole.files)
            got = [_key(f) for f in alone.findings]
            want = [_key(f) for f in whole.findings if f.location.path == path]
            if got != want:
                differences.append(f"{repo.name}: {path} (changed): {len(got)} findings reported alone, "
                                   f"{len(want)} in the whole run")
            if alone.secrets != whole.secrets:
                differences.append(f"{repo.name}: {path} (changed): {len(alone.secrets)} secret values "
                                   f"reported alone, {len(whole.secrets)} in the whole run")
        finally:
            file.write_bytes(original)
            for other, data in before.items():
                other.write_bytes(data)
        lint(["."], settings, LintOptions(cache_dir=cache))   # the index of the tree as it was, for the next file
    return sliced, differences


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="*", type=Path)
    ap.add_argument("--per-repo", type=int, default=10, help="random files per repository besides those with findings")
    ap.add_argument("--all-files", action="store_true")
    ap.add_argument("--max-files", type=int, default=None, help="at most this many files per repository "
                    "(a random subset of the sample): for the large bench trees")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/mlcost-report-alone"))
    ap.add_argument("--touch", action="store_true",
                    help="also change each sampled file (a comment appended) and compare against the whole "
                         "run on the changed tree (the files are restored; the repository must be writable)")
    ap.add_argument("--touch-others", type=int, default=0, metavar="N",
                    help="with --touch: also change N other random files before each changed file is reported "
                         "(the first hook after a pull reads them with its slice)")
    args = ap.parse_args()
    repos = args.repos or sorted(p for base in (SHARED / "corpus", SHARED / "corpus-v2") if base.is_dir()
                                 for p in base.iterdir() if p.is_dir())
    if not repos:
        sys.exit("no repositories given and none under ../shared/corpus*")
    rng = random.Random(args.seed)
    started = time.perf_counter()
    checked, sliced, differences = 0, 0, []
    for repo in repos:
        n, s, diff = check(repo.resolve(), args.per_repo, args.all_files, rng, args.cache, args.touch,
                          args.max_files, args.touch_others)
        checked += n
        sliced += s
        differences += diff
    for line in differences:
        print("DIFF", line)
    print(f"{checked} files in {len(repos)} repositories reported alone ({sliced} of them from a slice of the "
          f"project: mlcost_lint.project_slice); {len(differences)} differ ({time.perf_counter() - started:.0f} s)")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
