"""The source folders map to mlcost_lint / mlcost_lint.rules; every package
folder must be listed in pyproject.toml or `pip install .` silently drops it."""

from __future__ import annotations

import sys
from pathlib import Path

from mlc_testing import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _package_name(folder: Path) -> str:
    rel = folder.relative_to(ROOT)
    top, *rest = rel.parts
    base = {"linter": ["mlcost_lint"], "rules": ["mlcost_lint", "rules"]}[top]
    return ".".join(base + list(rest))


def test_every_package_folder_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {_package_name(init.parent) for top in ("linter", "rules") for init in (ROOT / top).rglob("__init__.py")
             if "__pycache__" not in init.parts}
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - found == set(), "listed packages with no folder"


def test_no_top_level_linter_or_rules_module():
    import mlcost_lint
    import mlcost_lint.rules

    assert Path(mlcost_lint.__file__).parent.name in ("linter", "mlcost_lint")
    assert mlcost_lint.rules.__name__ == "mlcost_lint.rules"
