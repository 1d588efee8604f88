"""Shared test helpers: run the pipeline in-process, or the real CLI.

Import as `from mlc_testing import ...` (tests/ is on sys.path through
tests/conftest.py). Not named conftest: sub-folders have conftest files of
their own, and `from conftest import` would pick whichever was loaded last.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"
# The OASIS SARIF 2.1.0 schema (errata 01, sha256 c3b4bb2d...682e), kept in
# the repository so a contributor's clone checks SARIF without ../shared.
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
# The team's validator (schema + GitHub ingestion rules): only beside the repository.
SARIF_VALIDATOR = ROOT.parent / "shared" / "tools" / "validate-sarif"


# A Kubernetes Job holding GPUs and no deadline: findings to compare between runs.
GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: t
          image: trainer:1
          resources:
            limits:
              nvidia.com/gpu: {gpus}
      restartPolicy: Never
"""

def sarif_schema_errors(doc: object) -> list[str]:
    """Every violation of the SARIF 2.1.0 schema in ``doc`` (empty: valid)."""
    import json

    import jsonschema

    validator = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text()))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: Path | str | None = None, stdin: str | bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> CliResult:
    """Run the installed entry point exactly as a user would (python -m mlcost_lint)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run(
        [sys.executable, "-m", "mlcost_lint", *args], cwd=cwd, input=data,
        capture_output=True, env=full_env, timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def printed_by_another_process(code: str) -> str:
    """What ``python -c code`` prints (stripped), in a process with another
    string-hash seed: for values that must not depend on the process."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": "12345"})
    return proc.stdout.strip()


def cached_project(tmp_path: Path, monkeypatch, files: dict[str, str]) -> Path:
    """``files`` written under ``tmp_path/proj``, the working folder for the
    test, with the cache's signing key kept in ``tmp_path/home`` (never the
    user's): for tests that lint one project through its cache again and again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.chdir(root)
    return root


def lint_dir(path: Path | str, cwd: Path | str | None = None, *, report_paths: frozenset[str] | None = None,
             **config):
    """Lint a path in-process with config keys given as keyword arguments
    (underscored: required_tags=[...]); returns the LintResult. Paths in
    findings are relative to ``cwd`` (default: the fixture folder's parent).
    ``report_paths``: report only these files, as the pre-commit hook does."""
    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    path = Path(path)
    cwd = Path(cwd) if cwd else path.parent
    settings = Settings(root=cwd)
    for key, value in config.items():
        setattr(settings, key, value)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return lint([os.path.relpath(path, cwd)], settings,
                    LintOptions(use_cache=False, jobs=1, report_paths=report_paths))
    finally:
        os.chdir(old)


def triples(result, code: str | None = None) -> list[tuple[str, str, int, str]]:
    """(code, path, line, message) of each finding, optionally one code only."""
    return [(f.code, f.location.path, f.location.line, f.message)
            for f in result.findings if code is None or f.code == code]



# -- rule fixture tables -----------------------------------------------------
# Rule tests whose fixtures are one folder per case (`positive/<case>`,
# `negative/<case>`) with an EXPECTED table {case: [(code, path, line, message)]}.

def fixture_case_names(base: Path) -> list[str]:
    """Every `<kind>/<case>` folder under a rule's fixture folder."""
    return sorted(f"{kind.name}/{case.name}" for kind in base.iterdir() for case in kind.iterdir())


def cli_json_findings(target: str, code: str, cwd: Path) -> tuple[CliResult, list[tuple[str, str, int, str]]]:
    """Run the real CLI with --format json --select CODE on ``target`` and
    return the result and its (code, path, line, message) findings."""
    import json

    res = run_cli(target, "--format", "json", "--select", code, "--no-cache", cwd=cwd)
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(res.out)["findings"]] \
        if res.out.strip() else []
    return res, found
