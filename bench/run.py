"""Benchmark mlcost-lint on a synthetic ML-platform repository.

    python bench/run.py                      # 2,000 files (~14 MB), 3 runs each
    python bench/run.py --scales 1,2,4       # the scaling curve (1x, 2x, 4x the files)
    python bench/run.py --copies 1,4         # the same tree copied into 1 and 4 folders (names repeat)

See bench/README.md for what each row means. Every number is the median
of --repeat runs of a fresh process; peak memory is sampled over the
whole process tree (parent + parse workers, proportional set size).
Raw numbers go to bench/results/<date>-<files>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402


@dataclass
class Sample:
    wall: float
    peak_mb: float          # whole process tree, PSS, sampled every 100 ms
    max_rss_mb: float       # largest single process (wait4 ru_maxrss)
    rc: int
    timed_out: bool = False
    cpu: float = 0.0        # user + system seconds of the process and its (reaped) workers
    failed: bool = False    # non-zero exit: excluded from the medians


@dataclass
class Row:
    name: str
    what: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def wall(self) -> float | None:
        ok = [s.wall for s in self.samples if not s.timed_out and not s.failed]
        return statistics.median(ok) if ok else None

    @property
    def cpu(self) -> float | None:
        ok = [s.cpu for s in self.samples if not s.timed_out and not s.failed]
        return statistics.median(ok) if ok else None

    @property
    def peak(self) -> float | None:
        ok = [s.peak_mb for s in self.samples if not s.timed_out and not s.failed]
        return max(ok) if ok else None


def _tree(pid: int) -> list[int]:
    """pid and its descendants, from /proc/PID/task/*/children (cheap: no
    scan of every process on the machine)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return out


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def measure(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None,
            ok_codes: tuple[int, ...] = (0,)) -> Sample:
    peak = [0]
    done = threading.Event()
    t0 = time.perf_counter()
    import tempfile

    # stderr to a file, not a pipe: a chatty tool (Checkov logs a warning per
    # module) would fill a pipe nobody reads until it exits, and block.
    errfile = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errfile, env=env)

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(_pss_kb(p) for p in _tree(proc.pid)))
            done.wait(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        for p in reversed(_tree(proc.pid)):
            try:
                os.kill(p, 9)
            except OSError:
                pass

    # A blocking wait ends the moment the process does (a 5 ms polling loop
    # here added 0-5 ms to every run: 2.5 ms on average, 5% of a warm run).
    timer = threading.Timer(timeout, kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    timed_out = killed.is_set()
    done.set()
    thread.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    errfile.seek(0)
    err = errfile.read().decode(errors="replace")
    errfile.close()
    failed = proc.returncode not in ok_codes and not timed_out
    if failed:
        # Every mlcost-lint run here uses --exit-zero: any other code is a crash.
        print(f"  ! {' '.join(cmd[:4])}... exited {proc.returncode}: {err.strip()[-800:]}", file=sys.stderr)
    return Sample(wall, peak[0] / 1024, usage.ru_maxrss / 1024, proc.returncode, timed_out,
                  usage.ru_utime + usage.ru_stime, failed)


def _tool() -> list[str]:
    script = Path(sys.executable).parent / "mlcost-lint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcost_lint"]


def _touch_targets(repo: Path, leaf: bool = False) -> list[Path]:
    """Every 100th .tf/.yaml file; ``leaf``: none in a folder named
    ``modules`` (a shared module's file makes every root that calls it
    evaluate again, which is exact invalidation, not waste)."""
    files = sorted(p for p in repo.rglob("*") if p.is_file() and p.suffix in (".tf", ".yaml", ".yml")
                   and ".git" not in p.parts and not (leaf and "modules" in p.relative_to(repo).parts))
    return files[::100]


def make_copies(src: Path, dest: Path, copies: int) -> tuple[int, int]:
    """``copies`` copies of the tree ``src`` in ``dest/copy1`` .. ``dest/copyN``,
    one ``.git`` at the top: the same bucket, module, node-group, workload and
    Kubernetes object names and training-config paths repeat in every folder,
    as in a monorepo that vendors copies of one platform. Returns (files, bytes)."""
    if dest.exists():
        shutil.rmtree(dest)
    n = total = 0
    for i in range(1, copies + 1):
        shutil.copytree(src, dest / f"copy{i}", ignore=shutil.ignore_patterns(".git"), symlinks=True)
    for p in dest.rglob("*"):
        if p.is_file() and not p.is_symlink():
            n += 1
            total += p.stat().st_size
    (dest / ".git").mkdir()
    return n, total


def bench_scale(files: int, args: argparse.Namespace, include_checkov: bool, copies: int = 0) -> dict:
    if args.tree is not None:
        src, label = args.tree, f"tree-{args.tree.name}"
    else:
        src, label = args.work / f"repo-{files}", f"{files}"
    if copies:
        if args.tree is None:
            generate(src, files, args.seed)
        repo = args.work / f"repo-{label}-copies{copies}"
        n, size = make_copies(src, repo, copies)
        label = f"{label}-copies{copies}"
    elif args.tree is not None:
        repo = src
        n = sum(1 for p in repo.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
    else:
        repo = src
        n, size = generate(repo, files, args.seed)
    cache = args.work / f"cache-{label}"
    shutil.rmtree(cache, ignore_errors=True)
    tool = _tool()
    common = ["--exit-zero", *(["--ignore", args.ignore] if args.ignore else [])]
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    r, t = (args.repeat if files == args.files or args.repeat_scaled is None else args.repeat_scaled), args.timeout
    rows: list[Row] = []
    print(f"\n== {n} files, {size / 1e6:.1f} MB in {repo} (load average {os.getloadavg()[0]:.2f})", flush=True)

    def sample(row: Row, cmd: list[str], ok_codes=(0,)) -> Sample:
        """One more run of ``cmd`` into ``row``, printed."""
        s = measure(cmd, repo, t, ok_codes=ok_codes)
        row.samples.append(s)
        print(f"  {row.name:<10} run {len(row.samples)}: {s.wall:8.2f} s  cpu {s.cpu:8.2f} s  {s.peak_mb:7.0f} MB"
              f"  load {os.getloadavg()[0]:.2f}"
              + ("  FAILED" if s.failed else "")
              + ("  TIMEOUT" if s.timed_out else ""), flush=True)
        return s

    def run(name: str, what: str, cmd: list[str], times: int, before=None, ok_codes=(0,)) -> Row:
        row = Row(name, what)
        for i in range(times):
            if before:
                before(i)
            if sample(row, cmd, ok_codes).timed_out:
                break
        rows.append(row)
        return row

    run("floor", "(a) parse-only floor: python-hcl2 + PyYAML C composer + json, one process",
        [sys.executable, str(HERE / "floor.py"), "."], r)
    run("cold", "(b) mlcost-lint cold, --no-cache", [*tool, ".", "--no-cache", *jobs, *common], r)
    if args.serial:
        run("cold-j1", "(b') mlcost-lint cold, --no-cache --jobs 1", [*tool, ".", "--no-cache", "--jobs", "1", *common], 1)
    run("fill", "cold run filling an empty cache", [*tool, ".", "--cache-dir", str(cache), *jobs, *common], 1)
    run("warm", "(c) warm, unchanged cache", [*tool, ".", "--cache-dir", str(cache), *jobs, *common], r)

    def run_touched(name: str, what: str, targets: list[Path], mark: str, tf_block: bool = False) -> None:
        """``name`` with every file of ``targets`` changed before each run
        (new content each time: neither cache has it), restored after: a
        comment appended; ``tf_block``: a .tf file gets a new ``locals``
        block instead, which Terraform reads (a comment leaves the tree,
        and so the evaluation, as it was: cache_trees.meaning_of)."""
        originals = {p: p.read_bytes() for p in targets}

        def touch(i: int) -> None:
            for p, data in originals.items():
                if tf_block and p.suffix == ".tf":
                    p.write_bytes(data + f"\nlocals {{\n  bench_touch_{i} = {i}\n}}\n".encode())
                else:
                    p.write_bytes(data + f"\n# {mark} {i}\n".encode())

        run(name, what.format(n=len(targets)), [*tool, ".", "--cache-dir", str(cache), *jobs, *common], r,
            before=touch)
        for p, data in originals.items():
            p.write_bytes(data)

    run_touched("touch1%", "(d) warm after changing {n} files (1%)", _touch_targets(repo), "bench touch")
    run_touched("touch-leaf", "(d') as (d), {n} files none in a modules/ folder", _touch_targets(repo, leaf=True),
                "bench touch leaf")
    run_touched("touch-tf", "(d'') as (d), each .tf file given a new locals block, not a comment",
                _touch_targets(repo), "bench touch tf", tf_block=True)

    # a manifest added: a copy of a Job under a new name each run (copies removed after the rows)
    job = next((p for p in sorted(repo.glob("**/*.yaml")) if "k8s" in p.relative_to(repo).parts
                and re.search(rb"^kind: (Job|PyTorchJob)\s*$", p.read_bytes(), re.M)), None)
    if job is not None:
        job_data, added = job.read_bytes(), []

        def add_job(i: int) -> None:
            copy = job.with_name(f"{job.stem}-bench-add-{i}{job.suffix}")
            copy.write_bytes(job_data)
            added.append(copy)

        run("add1", f"(f) warm after adding a manifest (a copy of {job.relative_to(repo)}, one more each run)",
            [*tool, ".", "--cache-dir", str(cache), *jobs, *common], r, before=add_job)
        # the original removed, its copies kept: a tree no earlier run saw (removing the copies
        # instead would give back the tree before add1, which the run cache answers)
        job.unlink()
        run("remove1", f"(f') warm after {job.relative_to(repo)} is removed (its copies stay)",
            [*tool, ".", "--cache-dir", str(cache), *jobs, *common], 1)
        job.write_bytes(job_data)
        for copy in added:
            copy.unlink()

    small = sorted(repo.glob("**/configs/*/*/accelerate.yaml"))
    if small and job is not None:
        # add1/remove1 just made and removed files: the first run after them
        # walks the whole tree again (+0.1 s on 8,000 files), and until
        # session 36 every run within 3 s of a folder change did (a walk was
        # not recorded while a stamp was younger than replay.margin_ns;
        # discover_cache). Waited out, so the hook rows measure one changed
        # file, as they did before add1/remove1.
        time.sleep(3.5)
    if small:   # the generated shape; a --tree may have no such file
        small = small[0].relative_to(repo)
        small_original = (repo / small).read_bytes()

        def change_small(i: int) -> None:
            # pre-commit runs on a file that was just changed: new content each run,
            # so neither the parse cache nor the run cache has it.
            (repo / small).write_bytes(small_original + f"\n# bench hook {i}\n".encode())

        run("hook", f"(e) pre-commit: one changed file ({small}), project context, warm cache",
            [*tool, str(small), "--cache-dir", str(cache), *common], r, before=change_small)
        run("hook-alone", "(e') one changed file, --no-project-context --no-cache",
            [*tool, str(small), "--no-project-context", "--no-cache", *common], r, before=change_small)
        run("hook-warm", "(e'') the same file unchanged, project context (a re-run: the run cache)",
            [*tool, str(small), "--cache-dir", str(cache), *common], r)
        (repo / small).write_bytes(small_original)
    run("version", "mlcost-lint --version", [*tool, "--version"], r)
    if include_checkov and args.checkov:
        out = args.work / "checkov-out"
        # This box's speed moves by tens of percent within minutes: the cold
        # row above ran minutes before Checkov. Cold runs just before and just
        # after it compare the two at one moment (print_checkov).
        cold = [*tool, ".", "--no-cache", *jobs, *common]
        beside = run("cold-by-ck", "(g') cold, --no-cache, the runs just before and after Checkov", cold, r)
        run("checkov", "(g) checkov -d . --framework terraform kubernetes",
            [args.checkov, "-d", ".", "--framework", "terraform", "kubernetes", "--quiet", "--compact",
             "-o", "json", "--output-file-path", str(out), "--skip-download"], 1, ok_codes=(0, 1))
        for _ in range(r):
            if sample(beside, cold).timed_out:
                break
    return {"files": n, "bytes": size, "copies": copies, "rows": [{"name": x.name, "what": x.what, "median_s": x.wall,
                                                  "median_cpu_s": x.cpu, "peak_mb": x.peak, "samples": [asdict(s) for s in x.samples]}
                                                 for x in rows]}


def _label(res: dict) -> str:
    copies = f"{res['copies']} copies, " if res.get("copies") else ""
    return f"{copies}{res['files']} files, {res['bytes'] / 1e6:.0f} MB"


_MIN_PEAK_MB = 10     # below this the 100 ms PSS sampler saw the process barely or not at all


def print_ratios(results: list[dict]) -> None:
    """Each run's wall, CPU and peak memory as a multiple of the first
    column's (with --copies 1,4: what 4 copies cost against one)."""
    base = {row["name"]: row for row in results[0]["rows"]}
    print(f"\nwall / CPU / peak MB as a multiple of the first column ({_label(results[0])})")
    for res in results[1:]:
        print(f"  {_label(res)} (input x{res['bytes'] / results[0]['bytes']:.2f})")
        for row in res["rows"]:
            b = base.get(row["name"])
            if not b or not b["median_s"] or row["median_s"] is None:
                continue
            cpu = (f"{row['median_cpu_s'] / b['median_cpu_s']:.2f}" if b.get("median_cpu_s") and row.get("median_cpu_s")
                   else "-")
            # A run shorter than the sampler's period (a replayed warm run,
            # ~0.1 s) has no meaningful peak: 0 against 39 MB printed x536.
            peak = (f"{row['peak_mb'] / b['peak_mb']:.2f}"
                    if (b.get("peak_mb") or 0) >= _MIN_PEAK_MB and (row.get("peak_mb") or 0) >= _MIN_PEAK_MB else "-")
            print(f"    {row['name']:<10} wall x{row['median_s'] / b['median_s']:.2f}  cpu x{cpu}  peak x{peak}")


def print_checkov(results: list[dict]) -> None:
    """How many times our cold run Checkov took: against the cold row, and
    against the cold runs just before and after Checkov (one moment)."""
    for res in results:
        rows = {row["name"]: row for row in res["rows"]}
        checkov = rows.get("checkov", {}).get("median_s")
        if not checkov:
            continue
        cold, beside = rows["cold"]["median_s"], rows.get("cold-by-ck", {}).get("median_s")
        line = f"\nCheckov / mlcost-lint cold ({_label(res)}): x{checkov / cold:.1f} against the cold row"
        if beside:
            line += f", x{checkov / beside:.1f} against the cold runs beside it"
        print(line)


def print_table(results: list[dict]) -> None:
    names = [row["name"] for row in results[0]["rows"]]
    print("\nmedian wall seconds (x floor) and peak MB of the process tree")
    header = f"{'':<11}" + "".join(f"{_label(r):>30}" for r in results)
    print(header)
    for name in names:
        line = f"{name:<11}"
        for res in results:
            rows = {row["name"]: row for row in res["rows"]}
            row = rows.get(name)
            floor = rows["floor"]["median_s"]
            if row is None or row["median_s"] is None:
                line += f"{'timeout' if row else '-':>30}"
                continue
            ratio = f"({row['median_s'] / floor:.3f}x)" if floor else ""
            line += f"{row['median_s']:>10.2f} s {ratio:>10} {row['peak_mb']:>5.0f} MB"
        print(line)
    print("\nmedian CPU seconds, user + system, the CLI and its parse workers (x floor CPU)")
    for name in names:
        line = f"{name:<11}"
        for res in results:
            rows = {row["name"]: row for row in res["rows"]}
            row, floor = rows.get(name), rows["floor"].get("median_cpu_s")
            if row is None or not row.get("median_cpu_s"):
                line += f"{'-':>30}"
                continue
            ratio = f"({row['median_cpu_s'] / floor:.3f}x)" if floor else ""
            line += f"{row['median_cpu_s']:>10.2f} s {ratio:>10}{'':>9}"
        print(line)
    for row in results[0]["rows"]:
        print(f"  {row['name']:<10} {row['what']}")


def main() -> None:
    ap = argparse.ArgumentParser(description="Benchmark mlcost-lint (see bench/README.md).")
    ap.add_argument("--files", type=int, default=2000, help="files at scale 1 (default 2000)")
    ap.add_argument("--scales", default="1", help="comma-separated multiples of --files (e.g. 1,2,4)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    ap.add_argument("--repeat-scaled", type=int, default=None,
                    help="runs per measurement at scales other than 1 (default: --repeat)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--copies", default="",
                    help="comma-separated copy counts (e.g. 1,4): the tree at --files (or --tree) copied N times "
                         "into N folders, names repeated in each; replaces --scales")
    ap.add_argument("--tree", type=Path, default=None,
                    help="benchmark this existing tree instead of a generated one (with --copies: copies of it)")
    ap.add_argument("--jobs", type=int, default=None, help="pass --jobs to mlcost-lint (default: its default)")
    ap.add_argument("--serial", action="store_true", help="also time a cold --jobs 1 run")
    ap.add_argument("--ignore", default="", help="pass --ignore CODES to mlcost-lint (e.g. to isolate a slow rule)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/mlcost-bench"))
    ap.add_argument("--timeout", type=float, default=1800, help="seconds before a run is killed")
    default_checkov = shutil.which("checkov") or ("/tmp/checkov-venv/bin/checkov"
                                                  if Path("/tmp/checkov-venv/bin/checkov").exists() else None)
    ap.add_argument("--checkov", default=default_checkov, help="checkov executable (default: PATH, then /tmp/checkov-venv)")
    ap.add_argument("--no-checkov", dest="checkov", action="store_const", const=None)
    ap.add_argument("--checkov-all-scales", action="store_true", help="run Checkov at every scale (slow)")
    ap.add_argument("--out", type=Path, default=None, help="raw results JSON (default bench/results/...)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    _compile_package()
    if args.copies:
        copies = [int(c) for c in args.copies.split(",")]
        results = [bench_scale(args.files, args, include_checkov=(i == 0 or args.checkov_all_scales), copies=c)
                   for i, c in enumerate(copies)]
        shape = f"{args.tree.name if args.tree else args.files}-copies{args.copies.replace(',', '-')}"
    else:
        scales = [int(s) for s in args.scales.split(",")]
        results = [bench_scale(args.files * s, args, include_checkov=(i == 0 or args.checkov_all_scales))
                   for i, s in enumerate(scales)]
        shape = f"{args.tree.name if args.tree else args.files}x{args.scales.replace(',', '-')}"
    print_table(results)
    print_checkov(results)
    if len(results) > 1:
        print_ratios(results)
    out = args.out or HERE / "results" / f"{time.strftime('%Y%m%d-%H%M')}-{shape}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "platform": platform.platform(),
            "load_average_end": os.getloadavg(), "args": {k: str(v) for k, v in vars(args).items()}}
    out.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    print(f"\nraw numbers: {out}")


def _compile_package() -> None:
    """Byte-compile the installed package first, as `pip install` does for a
    user: with PYTHONDONTWRITEBYTECODE set (this box sets it) and no .pyc,
    every run compiled ~90 modules from source (0.09 s of a 0.40 s warm run)."""
    import compileall

    import mlcost_lint
    import mlcost_lint.rules

    for mod in (mlcost_lint, mlcost_lint.rules):
        for folder in mod.__path__:
            compileall.compile_dir(folder, quiet=1)


if __name__ == "__main__":
    main()
