"""PyYAML imported through mlcost_lint.yaml_lib: its pure-Python reader's
non-printable pattern compiled on first use, nothing else changed."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from mlcost_lint.yaml_lib import CompiledOnFirstUse, yaml


def test_a_fresh_import_leaves_the_readers_pattern_to_its_first_use():
    # In a fresh interpreter (this one may have imported PyYAML before the
    # package did): the installed PyYAML's pattern is the one deferred.
    code = ("import re; real = re.compile\n"
            "from mlcost_lint.yaml_lib import yaml\n"
            "print(type(yaml.reader.Reader.NON_PRINTABLE).__name__, re.compile is real)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["CompiledOnFirstUse", "True"]


def test_the_deferred_pattern_answers_as_the_compiled_one():
    text = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"
    deferred, compiled = CompiledOnFirstUse(text, 0), re.compile(text)
    for sample in ("plain text", "tab\tok", "bell\x07here", "\ufffe", "caf\xe9 \U0001f600"):
        found, expected = deferred.search(sample), compiled.search(sample)
        assert (found.span() if found else None) == (expected.span() if expected else None)
    assert deferred.pattern == text and deferred.sub("?", "a\x01b") == "a?b"


def test_pyyamls_pure_python_loader_still_refuses_non_printable_characters():
    with pytest.raises(yaml.reader.ReaderError, match="special characters are not allowed"):
        yaml.load("a: \x01\n", Loader=yaml.SafeLoader)
    assert yaml.load("a: caf\xe9\n", Loader=yaml.SafeLoader) == {"a": "caf\xe9"}
