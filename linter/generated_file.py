"""The command line of a file generated from the code and kept in the
repository (docs/rules.md: mlcost_lint.docs; the rule registry's table:
mlcost_lint.registry): print it, write it, or check that the kept copy is
current (exit 1 with the command that brings it up to date)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


def main(argv: list[str] | None, module: str, description: str, generate: Callable[[], str]) -> int:
    """``python -m module [--output FILE | --check FILE]``; ``generate``
    returns the file's text."""
    import argparse

    name = module.rsplit(".", 1)[-1]
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--output", metavar="FILE", help="write it to FILE")
    group.add_argument("--check", metavar="FILE", help="exit 1 when FILE differs from what is generated")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        try:
            current = Path(args.check).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"mlcost-lint {name}: cannot read {args.check}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        if current != text:
            print(f"mlcost-lint {name}: {args.check} is out of date; run "
                  f"`python -m {module} --output {args.check}`", file=sys.stderr)
            return 1
        return 0
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text, encoding="utf-8")
        return 0
    sys.stdout.write(text)
    return 0
