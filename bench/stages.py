"""Time each stage of one lint run, in-process, and optionally profile it.

    python bench/stages.py REPO [--jobs N] [--cache-dir DIR | --no-cache]
                                [--profile OUT.pstats] [--top 30] [--ignore CODES]

Prints seconds per stage (discover, parse, model+link, rules one by one,
suppress) so that a slow stage or a slow rule is visible by name. The
stages are the ones ``mlcost_lint.pipeline.lint`` runs, called in the same
order with the same arguments.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", type=Path)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--profile", type=Path, default=None, help="write cProfile stats here and print the top")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--ignore", default="", help="comma-separated rule codes to skip")
    args = ap.parse_args()

    os.chdir(args.repo)
    from mlcost_lint.config import load_settings
    from mlcost_lint.discover import discover
    from mlcost_lint.engine import selected_rules
    from mlcost_lint.parse_stage import parse_all
    from mlcost_lint.pipeline import LintOptions, build_model
    from mlcost_lint.suppress import apply_suppressions

    settings = load_settings(None, Path("."))
    if args.ignore:
        settings.ignore = [*settings.ignore, *args.ignore.split(",")]
    options = LintOptions(jobs=args.jobs, use_cache=not args.no_cache, cache_dir=args.cache_dir)
    prof = cProfile.Profile() if args.profile else None
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def stage(name: str, fn, *a):
        t = time.perf_counter()
        c = time.process_time()
        if prof:
            prof.enable()
        out = fn(*a)
        if prof:
            prof.disable()
        times[name] = times.get(name, 0.0) + time.perf_counter() - t
        cpu[name] = cpu.get(name, 0.0) + time.process_time() - c
        return out

    t0 = time.perf_counter()
    found = stage("discover", discover, ["."], settings.exclude, settings.root)
    parsed = stage("parse", parse_all, found.files, settings, options)
    project = stage("model+link", build_model, parsed, settings, [], {})
    findings = []
    for rule_cls in selected_rules(settings):
        rule = rule_cls()

        def run(rule=rule):
            try:
                return list(rule.check(project, settings))
            except Exception as exc:  # a rule bug is the owner's; keep timing the rest
                print(f"rule {rule.code} failed: {exc!r}", file=sys.stderr)
                return []
        findings += stage(f"rule {rule.code}", run)
    try:  # the secret redaction lint() runs on findings (when the module exists)
        from mlcost_lint.redact import redact_findings
    except ImportError:
        redact_findings = None
    if redact_findings is not None:
        stage("redact", redact_findings, findings, project)
    else:
        times["redact"] = cpu["redact"] = 0.0
    by_path = {pf.path: pf for pf in parsed}
    stage("suppress", apply_suppressions, findings, by_path, settings.per_file_ignores, settings.root)
    total = time.perf_counter() - t0
    rules_total = sum(v for k, v in times.items() if k.startswith("rule "))
    print(f"files {len(found.files)}  findings {len(findings)}  total {total:.2f}s  "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    rules_cpu = sum(v for k, v in cpu.items() if k.startswith("rule "))
    print(f"  {'stage':<14} {'wall':>9} {'cpu':>9}")
    for name in ("discover", "parse", "model+link", "redact", "suppress"):
        print(f"  {name:<14} {times[name]:8.3f}s {cpu[name]:8.3f}s")
    print(f"  {'rules':<14} {rules_total:8.3f}s {rules_cpu:8.3f}s")
    for name, t in sorted(((k, v) for k, v in times.items() if k.startswith("rule ")), key=lambda kv: -kv[1])[:10]:
        print(f"    {name:<12} {t:8.3f}s {cpu[name]:8.3f}s")
    if prof:
        prof.dump_stats(args.profile)
        pstats.Stats(str(args.profile)).sort_stats("cumulative").print_stats(args.top)
        pstats.Stats(str(args.profile)).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
