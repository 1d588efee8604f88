"""pytest configuration. Helpers live in mlc_testing.py (importable because
pytest puts this folder on sys.path when it loads this file)."""

from __future__ import annotations

import pytest

from mlc_testing import FIXTURES  # noqa: F401  (also makes mlc_testing importable early)


@pytest.fixture
def fixtures():
    return FIXTURES
