"""The config index's path-suffix lookup (gpu_training.trailing_runs) finds
exactly the files the per-reference scan it replaced found: ``path ==
suffix or path.endswith("/" + suffix)``, for normalised paths and suffixes
as resolve_reference builds them."""

from __future__ import annotations

import posixpath

from hypothesis import given, settings, strategies as st

from mlcost_lint.rules.efficiency.gpu_training import trailing_runs

_part = st.sampled_from(["a", "b", "configs", "ds.json", "accelerate.yaml", "..", "x y", "copy1"])
_path = st.lists(_part, min_size=1, max_size=6).map("/".join)


def _norm(text: str) -> str:
    return posixpath.normpath(text) if text else text


@settings(max_examples=2000, deadline=None)
@given(_path, _path, st.sampled_from(["", "/", "//", "./"]))
def test_trailing_runs_are_the_suffixes_the_scan_matched(path: str, ref: str, lead: str) -> None:
    path = _norm(lead + path)
    suffix = _norm(ref).lstrip("/")
    scanned = path == suffix or path.endswith("/" + suffix)
    assert (suffix in trailing_runs(path)) == scanned


def test_trailing_runs_example() -> None:
    assert trailing_runs("a/b/c.yaml") == ["a/b/c.yaml", "b/c.yaml", "c.yaml"]
    assert "abs/x.yaml" in trailing_runs("/abs/x.yaml")
