"""Shared fixtures of the hostile-input suite."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def hostile_tree(tmp_path_factory) -> Path:
    """A real slice of the corpus, the demo and hostile files (see
    test_determinism._tree); read-only for the tests that share it."""
    from test_determinism import _tree

    return _tree(tmp_path_factory.mktemp("hostile-tree"))
