"""Time the hostile evaluation cases of issue 16 (items 14-16), one
project per case, through the real CLI, with a wall-clock and a memory cap.

    python bench/hostile_bounds.py [--timeout 60] [--mem-mb 3000]

Prints one line per case: seconds, peak RSS, exit code, first MLC001 line.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_EXCLUDES = int(__import__("os").environ.get("N_EXCLUDES", "40000"))
NL40K = "\\n" * 40_000
CASES: dict[str, dict[str, str]] = {
    "format-width": {"main.tf": 'locals {\n  x = format("%1500000000s", "x")\n}\n'},
    "format-precision": {"main.tf": 'locals {\n  x = format("%.999999999f", 1)\n}\n'},
    "regex-backtracking": {"main.tf": 'locals {\n  x = replace("' + "a" * 40 + '!", "/(a|a)*$/", "b")\n}\n'},
    "distinct-range": {"main.tf": 'locals {\n  x = length(distinct(range(20000)))\n}\n'},
    "chomp-newlines": {"main.tf": 'locals {\n  x = chomp("' + NL40K + 'x")\n}\n'},
    "bigint-squaring": {"main.tf": "locals {\n  a0 = 10\n" + "".join(
        f"  a{i} = local.a{i - 1} * local.a{i - 1}\n" for i in range(1, 40)) + "}\n"},
    "yamldecode-alias-bomb": {"main.tf": 'locals {\n  x = yamldecode(<<EOT\na: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
                              + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
                                        f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
                                        f"*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(8)) + "EOT\n  )\n}\n"},
    "template-growth": {"main.tf": 'locals {\n  s0 = "' + "x" * 1000 + '"\n' + "".join(
        f'  s{i} = "${{local.s{i - 1}}}${{local.s{i - 1}}}"\n' for i in range(1, 31)) + "}\n"},
    "join-of-copies": {"main.tf": 'locals {\n  s = "' + "x" * 2000 + '"\n  t = join("", [for i in range(1000000) : local.s])\n}\n'},
    "heredoc-unterminated": {"main.tf": "locals {\n  x = <<EOT\n" + " \n" * 100_000 + "}\n"},
    "heredoc-blank-run": {"main.tf": "locals {\n  x = <<EOT\n" + " \n" * 100_000 + "x\nEOT\n}\n"},
}


def _excludes() -> dict[str, str]:
    pats = ",\n".join(f'  "build{i}/**/*.yaml"' for i in range(N_EXCLUDES))
    files = {".mlcost-lint.toml": f"exclude = [\n{pats}\n]\n"}
    for i in range(100):
        files[f"k8s/cm{i}.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n"
    return files


def run(name: str, files: dict[str, str], timeout: float, mem_mb: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)

        def cap() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))

        start = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-m", "mlcost_lint", ".", "--no-cache", "--jobs", "1"],
                                  cwd=root, capture_output=True, timeout=timeout, preexec_fn=cap)
            took, code = time.monotonic() - start, proc.returncode
            out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            took, code, out = time.monotonic() - start, "timeout", ""
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        first = next((ln for ln in out.splitlines() if "MLC001" in ln or "Error" in ln), "-")
        print(f"{name:24} {took:7.2f} s  peak-so-far {peak:5d} MB  exit {code}  {first[:150]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--mem-mb", type=int, default=3000)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    cases = {**CASES, f"exclude-{N_EXCLUDES}": _excludes()}
    for name, files in cases.items():
        if not args.only or name in args.only.split(","):
            run(name, files, args.timeout, args.mem_mb)


if __name__ == "__main__":
    main()
