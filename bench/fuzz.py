"""The long fuzz profile: hostile input for as long as you let it run.

    /work/venv/bin/python bench/fuzz.py --minutes 30            # see bench/FUZZ.md

Targets, taken in turn until the time is up:

  mutate      byte-level mutation of a real file (fixtures/ and the shared corpus)
  truncate    a real file cut at a random line or byte
  project     several files of one real project mutated at once (links between broken files)
  kubernetes  hypothesis: fixture manifests with values replaced by wrong shapes
  training    hypothesis: fixture training configs with values replaced by wrong shapes
  terraform   hypothesis: generated modules (.tf / .tf.json / tfvars) mixing valid and junk values
  mixed       hypothesis: all three in one tree
  model       hypothesis: fixture models with random values at every attribute a rule reads (no rule raises)
  functions   hypothesis: random arguments to every Terraform function (only EvalError/BudgetExceeded, bounded time)
  cache       a linted project whose .mlcost_lint_cache is rearranged at random (links, FIFOs, junk, pickles)

Each case is linted in-process exactly as the CLI does and rendered in every
format; the oracle is tests/hostile/fuzzing.py:check_tree (no crash, no
internal error, valid JSON/SARIF, paths inside the root, exit 0/1, bounded
time). Failing inputs are written to OUT/failures/<n>/ with problems.txt;
OUT/summary.json has the counts. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "hostile"))

import fuzzing as F  # noqa: E402
import fuzz_targets as FT  # noqa: E402

TARGETS = ("mutate", "truncate", "project", "kubernetes", "training", "terraform", "mixed", "model", "functions",
           "cache")
SLOW_S = 5.0


class Run:
    def __init__(self, out: Path, time_limit_s: float) -> None:
        self.out = out
        self.time_limit_s = time_limit_s
        self.cases: Counter[str] = Counter()
        self.failures: list[dict] = []
        self.signatures: Counter[str] = Counter()
        self.slow: list[tuple[float, str]] = []
        self.codes: Counter[str] = Counter()
        self.scratch = Path(tempfile.mkdtemp(prefix="mlc-fuzz-"))

    def check(self, target: str, files: dict[str, bytes], origin: str) -> list[str]:
        root = self.scratch / "case"
        shutil.rmtree(root, ignore_errors=True)
        F.write_tree(root, files)
        outcome = F.check_tree(root, time_limit_s=self.time_limit_s)
        self.cases[target] += 1
        self.codes.update(outcome.codes)
        if outcome.seconds > SLOW_S:
            self.slow.append((round(outcome.seconds, 1), origin))
        if outcome.problems:
            self.record(target, files, origin, outcome.problems)
        return outcome.problems

    def record(self, target: str, files: dict[str, bytes], origin: str, problems: list[str]) -> None:
        signature = problems[0].strip().splitlines()[-1][:200]
        self.signatures[signature] += 1
        if self.signatures[signature] > 3:      # keep a few examples of each defect
            return
        where = self.out / "failures" / f"{len(self.failures):04d}"
        F.write_tree(where / "input", files)
        (where / "problems.txt").write_text(f"target: {target}\norigin: {origin}\n\n" + "\n\n".join(problems))
        self.failures.append({"target": target, "origin": origin, "dir": str(where), "signature": signature})

    def summary(self, seconds: float) -> dict:
        return {
            "seconds": round(seconds), "cases": sum(self.cases.values()), "cases_by_target": dict(self.cases),
            "failures": len(self.failures), "distinct_defects": dict(self.signatures),
            "failure_dirs": [f["dir"] for f in self.failures],
            "slowest": sorted(self.slow, reverse=True)[:10], "findings_by_code": dict(sorted(self.codes.items())),
        }


def _seeds() -> list[Path]:
    return F.seed_files(F.FIXTURES, F.CORPUS)


def byte_cases(run: Run, target: str, rng: random.Random, seeds: list[Path], n: int) -> None:
    for _ in range(n):
        path = rng.choice(seeds)
        data = path.read_bytes()
        if target == "mutate":
            case = F.mutate(data, rng, rounds=rng.choice([1, 3, 8]))
            origin = f"mutate {path} (seed {rng.random()})"
        else:
            cuts = F.truncations(data, max_cuts=50, rng=rng) or [b""]
            case = rng.choice(cuts)
            origin = f"truncate {path} at byte {len(case)}"
        run.check(target, {path.name: case, "ok/pod.yaml": b"apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n"},
                  origin)


def project_cases(run: Run, rng: random.Random, n: int) -> None:
    projects = [p for p in sorted(F.CORPUS.iterdir()) if p.is_dir()] + [F.FIXTURES / "demo"]
    for _ in range(n):
        base = rng.choice(projects)
        seeds = F.seed_files(base)
        if not seeds:
            continue
        chosen = rng.sample(seeds, k=min(len(seeds), rng.randint(2, 12)))
        files = {str(p.relative_to(base)): p.read_bytes() for p in chosen}
        for name in rng.sample(sorted(files), k=max(1, len(files) // 3)):
            files[name] = F.mutate(files[name], rng, rounds=4)
        run.check("project", files, f"project {base.name} (seed {rng.random()})")


def hypothesis_cases(run: Run, target: str, seed: int, n: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    strategy = {
        "kubernetes": st.tuples(F.mutated_document("kubernetes"), st.booleans()).map(
            lambda t: {"k8s/job." + ("json" if t[1] else "yaml"): F.dump_document(t[0], t[1])}),
        "training": st.tuples(F.mutated_document("training"), st.booleans()).map(
            lambda t: {"configs/train." + ("json" if t[1] else "yaml"): F.dump_document(t[0], t[1])}),
        "terraform": F.terraform_module().map(lambda fs: {f"infra/{k}": v for k, v in fs.items()}),
        "mixed": st.tuples(F.mutated_document("kubernetes"), F.mutated_document("training"),
                           F.terraform_module()).map(
            lambda t: {"k8s/job.yaml": F.dump_document(t[0], False),
                       "configs/train.yaml": F.dump_document(t[1], False),
                       **{f"infra/{k}": v for k, v in t[2].items()}}),
    }[target]
    last_failure: list = []

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def body(files: dict[str, bytes]) -> None:
        root = run.scratch / "case"
        shutil.rmtree(root, ignore_errors=True)
        F.write_tree(root, files)
        outcome = F.check_tree(root, time_limit_s=run.time_limit_s)
        run.cases[target] += 1
        run.codes.update(outcome.codes)
        if outcome.problems:
            last_failure[:] = [files, outcome.problems]
            raise AssertionError(outcome.problems[0])

    try:
        body()
    except Exception:  # noqa: BLE001 - hypothesis re-raises the shrunk failure
        if last_failure:
            run.record(target, last_failure[0], f"hypothesis {target} seed {seed} (shrunk)", last_failure[1])


def model_cases(run: Run, seed: int, n: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisException

    import model_values as MV

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(MV.fixture_sets()), st.data(), st.integers(1, 40), st.booleans())
    def body(name, data, k, before):
        try:
            result = MV.run_mutated(name, data.draw, k, before)
        except HypothesisException:
            raise               # hypothesis's own control flow
        except Exception:  # noqa: BLE001 - escaped the lint run: the tool's failure, not the harness's
            run.cases["model"] += 1
            run.record("model", {}, f"model {name}", [f"escaped the run:\n{traceback.format_exc()}"])
            return
        run.cases["model"] += 1
        problems = [f"{f.code}: {f.error}\n{f.traceback}" for f in result.failures]
        problems += [f"linker: {e}" for e in result.link_errors]
        if problems:
            run.record("model", {"changes.txt": "\n".join(result.changes).encode("utf-8", "backslashreplace")},
                       f"model {name}", problems)

    body()


def function_cases(run: Run, seed: int, n: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(FT.function_call())
    def body(call):
        run.cases["functions"] += 1
        problems = FT.check_function_call(*call)
        if problems:
            run.record("functions", {}, f"function {call[0]}", problems)

    body()


def cache_cases(run: Run, rng: random.Random, n: int) -> None:
    for _ in range(n):
        problems, done = FT.check_cache_case(run.scratch / "cache-case", rng, rng.randint(1, 6),
                                             time_s=run.time_limit_s)
        run.cases["cache"] += 1
        if problems:
            run.record("cache", {"done.txt": "\n".join(done).encode()}, "cache", problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "mlcost-lint-fuzz",
                        help="where failures and summary.json go (default: %(default)s)")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--case-time-limit", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--no-nice", action="store_true")
    args = parser.parse_args(argv)
    if not args.no_nice:
        os.nice(10)   # the machine is shared: fuzz in the background
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    targets = [t for t in args.targets.split(",") if t]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown targets: {', '.join(sorted(unknown))}")
    args.out.mkdir(parents=True, exist_ok=True)
    run = Run(args.out, args.case_time_limit)
    seeds = _seeds()
    print(f"fuzz: seed {seed}, {len(seeds)} seed files, targets {','.join(targets)}, {args.minutes} min", flush=True)
    start = time.monotonic()
    deadline = start + args.minutes * 60
    last_report = start
    round_no = 0
    try:
        while time.monotonic() < deadline:
            target = targets[round_no % len(targets)]
            round_no += 1
            try:
                if target in ("mutate", "truncate"):
                    byte_cases(run, target, rng, seeds, 50)
                elif target == "project":
                    project_cases(run, rng, 5)
                elif target == "model":
                    model_cases(run, rng.randrange(2**32), 20)
                elif target == "functions":
                    function_cases(run, rng.randrange(2**32), 500)
                elif target == "cache":
                    cache_cases(run, rng, 20)
                else:
                    hypothesis_cases(run, target, rng.randrange(2**32), 50)
            except Exception as exc:  # noqa: BLE001 - a harness bug must not end a long run
                run.record(target, {}, f"harness error in round {round_no}", [f"harness: {exc!r}"])
            if time.monotonic() - last_report > 60:
                last_report = time.monotonic()
                print(f"fuzz: {time.monotonic() - start:.0f} s, {sum(run.cases.values())} cases, "
                      f"{len(run.failures)} failures", flush=True)
    except KeyboardInterrupt:
        print("fuzz: interrupted", flush=True)
    finally:
        shutil.rmtree(run.scratch, ignore_errors=True)
    summary = {"seed": seed, **run.summary(time.monotonic() - start)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
