"""Cleaned message texts kept between runs (mlcost_lint.cleaned_texts):
the same output as cleaning again, only under the same secret values, and
no uncleaned text or secret value in the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

import mlcost_lint.redact as redact_mod
from mlcost_lint.cache import ParseCache
from mlcost_lint.cleaned_texts import CleanedTexts
from mlcost_lint.redact import text_cleaner

SECRET = "s3cr3t-value-9f8e7d"
TEXT = f"container 'train' passes {SECRET} to the job\x1b[31m"


def test_cleaned_texts_replay_only_under_the_same_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    cache = ParseCache(tmp_path / "cache", "test")
    fresh = text_cleaner({SECRET})(TEXT)
    assert SECRET not in fresh and "***" in fresh and "\x1b" not in fresh

    memo = CleanedTexts(cache, {SECRET})
    assert text_cleaner({SECRET}, memo=memo)(TEXT) == fresh
    memo.save()
    on_disk = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*.pkl"))
    assert SECRET.encode() not in on_disk and b"passes" in on_disk     # cleaned text only

    class NoRedactor:
        def __init__(self, *_):
            raise AssertionError("cleaned again")

    monkeypatch.setattr(redact_mod, "Redactor", NoRedactor)
    assert text_cleaner({SECRET}, memo=CleanedTexts(cache, {SECRET}))(TEXT) == fresh
    monkeypatch.undo()

    # another secret set: nothing replayed, the text is cleaned for it
    other = text_cleaner({"another-one-123456"}, memo=CleanedTexts(cache, {"another-one-123456"}))(TEXT)
    assert SECRET in other and other == text_cleaner({"another-one-123456"})(TEXT)
    # tab-keeping cleaners (source lines) never use the memo
    memo = CleanedTexts(cache, {SECRET})
    assert text_cleaner({SECRET}, keep_tabs=True, memo=memo)("a\tb") == "a\tb" and memo.used == {}
