"""A contributor's clone passes its own tests (issue 15, point 7).

The repository is cloned (its committed HEAD) into a temporary folder with
no ``../shared`` beside it, and every test file there that reads
``../shared`` (the corpus, the SARIF validator) is run with the clone's own
code: they must pass or skip with a reason, never fail or error. The rest of
the suite does not look outside the repository, so this is the part that can
break in a clone. About 20 s on the 2-core CI box.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import ROOT

# What a test file that reads ../shared names: the folder literal, or the
# helpers that point into it.
_READS_SHARED = re.compile(r'"shared"|\bCORPUS\b|SARIF_VALIDATOR|\bVALIDATOR\b|corpus_file')


def _shared_readers(tests: Path) -> list[str]:
    me = Path(__file__).name
    return sorted(p.relative_to(tests.parent).as_posix() for p in tests.rglob("test_*.py")
                  if p.name != me and _READS_SHARED.search(p.read_text(encoding="utf-8")))


@pytest.mark.slow
def test_clone_without_shared_skips_cleanly(tmp_path: Path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (or git is not installed)")
    workspace = tmp_path / "workspace"
    clone = workspace / "repo"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True,
                   capture_output=True, timeout=120)
    assert not (workspace / "shared").exists()
    # The clone's code, importable as mlcost_lint (the same layout as the
    # installed package: linter/ is mlcost_lint, rules/ is mlcost_lint.rules).
    shim = tmp_path / "shim"
    shutil.copytree(clone / "linter", shim / "mlcost_lint")
    shutil.copytree(clone / "rules", shim / "mlcost_lint" / "rules")
    env = {**os.environ, "PYTHONPATH": str(shim), "NO_COLOR": "1"}
    env.pop("SARIF_MULTITOOL", None)
    where = subprocess.run([sys.executable, "-c", "import mlcost_lint; print(mlcost_lint.__file__)"],
                           cwd=clone, env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.strip() == str(shim / "mlcost_lint" / "__init__.py"), where.stderr

    files = _shared_readers(clone / "tests")
    assert "tests/integrations/test_integ_sarif.py" in files and "tests/test_cache.py" in files, files
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "-rs", *files], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    tail = proc.stdout[-4000:]
    assert proc.returncode == 0, tail
    summary = proc.stdout.strip().splitlines()[-1]
    assert "failed" not in summary and "error" not in summary, summary
    skips = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    # Every skip says what is missing: ../shared (corpus or validator), or
    # the optional SARIF multitool (npm).
    assert skips and all("shared" in line or "multitool" in line for line in skips), skips
    assert re.search(r"\d+ passed", summary), summary
