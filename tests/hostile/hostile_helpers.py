"""Helpers for the hostile-input tests: a project with one known-good file
(the sentinel) whose finding must survive whatever else is in the tree."""

from __future__ import annotations

from pathlib import Path

from fuzzing import check_tree, internal_errors, lint_tree

from mlcost_lint.config import Settings

SENTINEL_NAME = "sentinel/job.yaml"
SENTINEL = b"""apiVersion: batch/v1
kind: Job
metadata:
  name: sentinel
spec:
  template:
    metadata:
      labels: {team: ml, project: p, cost-center: c}
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          resources:
            limits:
              nvidia.com/gpu: 1
"""
SENTINEL_FINDING = ("MLC204", SENTINEL_NAME, 5)


def findings_of(result, path: str | None = None) -> list[tuple[str, str, int, int, str]]:
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message)
            for f in result.findings if path is None or f.location.path == path]


def lint_with_sentinel(root: Path, files: dict[str, bytes], settings: Settings | None = None, **kw):
    """Write ``files`` and the sentinel under ``root``, lint in-process, and
    check the invariants every hostile case shares: no internal error, and
    the sentinel's finding is still there. Returns the LintResult."""
    root.mkdir(parents=True, exist_ok=True)
    for name, data in {SENTINEL_NAME: SENTINEL, **files}.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    result = lint_tree(root, settings or Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root), **kw)
    assert internal_errors(result) == []
    assert SENTINEL_FINDING in [(c, p, ln) for c, p, ln, _, _ in findings_of(result)], findings_of(result)
    return result


def only(result, path: str) -> list[tuple[str, str, int, int, str]]:
    return findings_of(result, path)


__all__ = ["SENTINEL", "SENTINEL_NAME", "SENTINEL_FINDING", "check_tree", "findings_of", "lint_with_sentinel",
           "only"]
