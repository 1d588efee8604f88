"""The console script: replay an unchanged run (replay.py), else run the
command line (cli.py), recording its output when it may be replayed."""

from __future__ import annotations

import sys


def main() -> None:
    from mlcost_lint import replay

    code, capture = replay.begin(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from mlcost_lint.cli import main as cli_main

    try:
        cli_main()
    except SystemExit as exc:
        if capture is not None:
            capture.finish(exc.code)
        raise
    except BaseException:
        if capture is not None:
            capture.abandon()
        raise
