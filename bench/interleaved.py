"""Interleaved A/B runs: two installs of mlcost-lint, or two kinds of run,
alternated pair by pair on one tree, so that a box whose speed drifts by
tens of percent within minutes (bench/README.md) moves both sides alike.
Not part of the test suite; the bench rows (run.py) stay the figures of
record, this says whether a change moved them.

    python bench/interleaved.py cold  OLD_PYTHON NEW_PYTHON TREE [--pairs 10]
    python bench/interleaved.py touch OLD_PYTHON NEW_PYTHON TREE [--pairs 20]
    python bench/interleaved.py touch-cold PYTHON TREE [--pairs 8]

``cold``: ``--no-cache`` runs of each install, in alternating order.
``touch``: every 100th .tf/.yaml/.yml file gets a new comment before each
pair (run.py's touch 1% row), then each install runs with a cache of its
own (filled first). ``touch-cold``: one install, the touch run then a cold
run, for the per-pair touch / cold ratio. Every file is restored at the
end. Prints each pair, the medians, and the per-pair differences (or
ratios); with ``touch``, whether both installs printed the same.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(python: str, tree: Path, *args: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run([python, "-m", "mlcost_lint", ".", "--exit-zero", *args], cwd=tree, capture_output=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{python}: exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-800:]}")
    return took, proc.stdout


def _touched(tree: Path) -> dict[Path, bytes]:
    """run.py's touch 1% files (every 100th .tf/.yaml/.yml), with their content."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import _touch_targets

    return {p: p.read_bytes() for p in _touch_targets(tree)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["cold", "touch", "touch-cold"])
    ap.add_argument("pythons_and_tree", nargs="+", help="OLD_PYTHON NEW_PYTHON TREE (touch-cold: PYTHON TREE)")
    ap.add_argument("--pairs", type=int, default=10)
    args = ap.parse_args(argv)
    *pythons, tree_arg = args.pythons_and_tree
    # absolute (the runs' working folder is the tree), links kept: a venv's python is one
    pythons = [str(Path(p).absolute()) if "/" in p else p for p in pythons]
    if len(pythons) != (1 if args.mode == "touch-cold" else 2):
        ap.error("cold and touch take two pythons, touch-cold one")
    tree = Path(tree_arg)
    caches = tempfile.TemporaryDirectory(prefix="mlcost-interleaved-")
    cache_of = [["--cache-dir", f"{caches.name}/{i}"] for i in range(2)]
    originals = _touched(tree) if args.mode != "cold" else {}
    sides: list[list[float]] = [[], []]
    outputs: list[set[bytes]] = [set(), set()]
    stamp = time.time_ns()
    try:
        if args.mode == "touch":
            for i, python in enumerate(pythons):
                _run(python, tree, *cache_of[i])       # fills its cache
        for n in range(args.pairs):
            for path, data in originals.items():
                path.write_bytes(data + f"\n# interleaved {stamp} {n}\n".encode())
            if args.mode == "touch-cold":
                plan = [(0, pythons[0], cache_of[0]), (1, pythons[0], ["--no-cache"])]
                if n == 0:
                    _run(pythons[0], tree, *cache_of[0])
            else:
                extra = [["--no-cache"]] * 2 if args.mode == "cold" else cache_of
                plan = [(i, pythons[i], extra[i]) for i in ((0, 1) if n % 2 == 0 else (1, 0))]
            for side, python, extra_args in plan:
                took, out = _run(python, tree, *extra_args)
                sides[side].append(took)
                outputs[side].add(out)
            print(f"pair {n + 1}: {sides[0][-1]:.3f} s  {sides[1][-1]:.3f} s", flush=True)
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
        caches.cleanup()
    a, b = sides
    print(f"medians: {statistics.median(a):.3f} s, {statistics.median(b):.3f} s")
    if args.mode == "touch-cold":
        ratios = sorted(x / y for x, y in zip(a, b))
        print(f"touch / cold per pair: median {statistics.median(ratios):.3f}, {ratios[0]:.3f}-{ratios[-1]:.3f}")
    else:
        diffs = [y - x for x, y in zip(a, b)]
        print(f"new - old per pair: median {statistics.median(diffs):+.3f} s, mean {statistics.mean(diffs):+.3f} s")
        if args.mode == "touch":
            print("same output" if outputs[0] == outputs[1] else "OUTPUTS DIFFER")
    return 0


if __name__ == "__main__":
    sys.exit(main())
