"""Shared helper for the training-config rule tests (MLC301/302/402/403/601/602)."""

from __future__ import annotations

from mlc_testing import FIXTURES, lint_dir, triples


def run(code: str, kind: str, **config):
    """(code, path, line, message) of ``code``'s findings over its fixture
    folder ``kind`` (positive/negative), paths relative to fixtures/rules/CODE."""
    folder = FIXTURES / "rules" / code / kind
    result = lint_dir(folder, cwd=folder.parent, select=[code], **config)
    return sorted(triples(result, code)), result
