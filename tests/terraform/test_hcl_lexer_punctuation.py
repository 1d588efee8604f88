"""The lexer appends "plain" punctuation (hcl_lexer._PLAIN_PUNCT) without
its post-lexer steps: that is right only while none of those steps acts on
it. These tests fail when an opener, a closer, "{" or a merging operator is
added to that set, and show the steps still applied around it."""

from __future__ import annotations

from mlcost_lint.parse import hcl_lexer
from mlcost_lint.parse.hcl_lexer import tokenize


def test_plain_punctuation_is_none_a_post_lexer_step_acts_on() -> None:
    acted_on = hcl_lexer._MERGING | hcl_lexer._IGNORING_OPENERS | hcl_lexer._CLOSERS | {"{"}
    assert hcl_lexer._PLAIN_PUNCT.isdisjoint(acted_on)


def test_a_newline_before_a_merging_operator_is_dropped_not_before_plain_punctuation() -> None:
    merged = [t[0] for t in tokenize("x = a\n+ b\n")]
    assert merged == ["w", "=", "w", "+", "w", "nl", "eof"]
    kept = [t[0] for t in tokenize("x = a\n. b\n")]
    assert kept == ["w", "=", "w", "nl", ".", "w", "nl", "eof"]


def test_newlines_inside_brackets_are_dropped_around_plain_punctuation() -> None:
    kinds = [t[0] for t in tokenize("x = [\n  a,\n  b.c,\n]\n")]
    assert kinds == ["w", "=", "[", "w", ",", "w", ".", "w", ",", "]", "nl", "eof"]


def test_a_for_expression_after_a_brace_still_drops_its_newlines() -> None:
    # "{" then "for": the held newline is dropped (brace_pending), ":" and "=>" inside stay plain
    kinds = [t[0] for t in tokenize("x = {\n  for k, v in m : k => v\n}\n")]
    assert kinds == ["w", "=", "{", "w", "w", ",", "w", "w", "w", ":", "w", "=>", "w", "}", "nl", "eof"]
