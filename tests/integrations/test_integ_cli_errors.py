"""Usage errors of the integration options: exit 2, one line, no traceback."""

from __future__ import annotations

from pathlib import Path

from mlc_testing import run_cli

from .projects import POD, write


def test_usage_errors_are_one_line(tmp_path: Path):
    write(tmp_path, {"pod.yaml": POD})
    cases = [
        (["pod.yaml", "--format", "fancy"], "mlcost-lint: error: Invalid value for '--format': 'fancy' is not one of"),
        (["pod.yaml", "--project-root", "nowhere"], "mlcost-lint: error: Invalid value for '--project-root'"),
        (["pod.yaml", "--baseline-report-stale"], "mlcost-lint: error: --baseline-report-stale needs --baseline FILE"),
        (["pod.yaml", "--write-baseline", "no/such/dir/b.json"], "mlcost-lint: error: --write-baseline: cannot write"),
    ]
    for args, start in cases:
        r = run_cli(*args, "--no-cache", cwd=tmp_path)
        assert r.code == 2, (args, r.out, r.err)
        assert r.err.startswith(start), r.err
        assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


def test_exit_codes_with_fail_on_and_exit_zero(tmp_path: Path):
    write(tmp_path, {"pod.yaml": POD})
    assert run_cli("pod.yaml", "--no-cache", cwd=tmp_path).code == 1
    assert run_cli("pod.yaml", "--fail-on", "error", "--no-cache", cwd=tmp_path).code == 0
    assert run_cli("pod.yaml", "--exit-zero", "--format", "full", "--no-cache", cwd=tmp_path).code == 0
    assert run_cli("pod.yaml", "--statistics", "--fail-on", "never", "--no-cache", cwd=tmp_path).code == 0
