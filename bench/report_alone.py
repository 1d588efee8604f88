"""Check that reporting one file gives exactly the whole run's findings in it.

    python bench/report_alone.py [REPO ...] [--per-repo 10] [--all-files] [--seed 1]

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


def check(repo: Path, per_repo: int, all_files: bool, rng: random.Random, cache_root: Path) -> tuple[int, list[str]]:
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
        differences = []
        for path in sample:
            alone = lint(["."], settings, LintOptions(cache_dir=cache, report_paths=frozenset({path})))
            got = [_key(f) for f in alone.findings]
            if got != by_path.get(path, []):
                differences.append(f"{repo.name}: {path}: {len(got)} findings reported alone, "
                                   f"{len(by_path.get(path, []))} in the whole run")
        return len(sample), differences
    finally:
        os.chdir(old)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="*", type=Path)
    ap.add_argument("--per-repo", type=int, default=10, help="random files per repository besides those with findings")
    ap.add_argument("--all-files", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/mlcost-report-alone"))
    args = ap.parse_args()
    repos = args.repos or sorted(p for base in (SHARED / "corpus", SHARED / "corpus-v2") if base.is_dir()
                                 for p in base.iterdir() if p.is_dir())
    if not repos:
        sys.exit("no repositories given and none under ../shared/corpus*")
    rng = random.Random(args.seed)
    started = time.perf_counter()
    checked, differences = 0, []
    for repo in repos:
        n, diff = check(repo.resolve(), args.per_repo, args.all_files, rng, args.cache)
        checked += n
        differences += diff
    for line in differences:
        print("DIFF", line)
    print(f"{checked} files in {len(repos)} repositories reported alone; {len(differences)} differ "
          f"({time.perf_counter() - started:.0f} s)")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
