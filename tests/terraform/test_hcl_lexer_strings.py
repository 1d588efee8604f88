"""The lexer's one-step path for plain strings (``"text"`` with no escape,
interpolation, directive or newline) gives the tokens string mode gives:
these were made by string mode before the fast path existed. The
differential test (test_hcl_differential.py) checks whole trees against
python-hcl2 on every corpus file."""

from __future__ import annotations

import pytest

from mlcost_lint.parse.hcl_lexer import tokenize

CASES = {
    'x = "abc"\n': [
        ('w', 'x', 1, 1, 1, 0),
        ('=', '=', 1, 3, 1, 2),
        ('"', '"', 1, 5, 1, 4),
        ('s', 'abc', 1, 6, 1, 5),
        ('"e', '"', 1, 9, 1, 8),
        ('nl', '\n', 1, 10, 2, 9),
        ('eof', '', 1, 10, 1, 10),
    ],
    'x = ""\n': [
        ('w', 'x', 1, 1, 1, 0),
        ('=', '=', 1, 3, 1, 2),
        ('"', '"', 1, 5, 1, 4),
        ('"e', '"', 1, 6, 1, 5),
        ('nl', '\n', 1, 7, 2, 6),
        ('eof', '', 1, 7, 1, 7),
    ],
    'resource "aws_s3_bucket" "b" {\n  bucket = "logs"\n}\n': [
        ('w', 'resource', 1, 1, 1, 0),
        ('"', '"', 1, 10, 1, 9),
        ('s', 'aws_s3_bucket', 1, 11, 1, 10),
        ('"e', '"', 1, 24, 1, 23),
        ('"', '"', 1, 26, 1, 25),
        ('s', 'b', 1, 27, 1, 26),
        ('"e', '"', 1, 28, 1, 27),
        ('{', '{', 1, 30, 1, 29),
        ('nl', '\n  ', 1, 31, 2, 30),
        ('w', 'bucket', 2, 3, 2, 33),
        ('=', '=', 2, 10, 2, 40),
        ('"', '"', 2, 12, 2, 42),
        ('s', 'logs', 2, 13, 2, 43),
        ('"e', '"', 2, 17, 2, 47),
        ('nl', '\n', 2, 18, 3, 48),
        ('}', '}', 3, 1, 3, 49),
        ('nl', '\n', 3, 2, 4, 50),
        ('eof', '', 3, 2, 3, 51),
    ],
    'x = { "a" = "b", c = "" }\n': [
        ('w', 'x', 1, 1, 1, 0),
        ('=', '=', 1, 3, 1, 2),
        ('{', '{', 1, 5, 1, 4),
        ('"', '"', 1, 7, 1, 6),
        ('s', 'a', 1, 8, 1, 7),
        ('"e', '"', 1, 9, 1, 8),
        ('=', '=', 1, 11, 1, 10),
        ('"', '"', 1, 13, 1, 12),
        ('s', 'b', 1, 14, 1, 13),
        ('"e', '"', 1, 15, 1, 14),
        (',', ',', 1, 16, 1, 15),
        ('w', 'c', 1, 18, 1, 17),
        ('=', '=', 1, 20, 1, 19),
        ('"', '"', 1, 22, 1, 21),
        ('"e', '"', 1, 23, 1, 22),
        ('}', '}', 1, 25, 1, 24),
        ('nl', '\n', 1, 26, 2, 25),
        ('eof', '', 1, 26, 1, 26),
    ],
    'x = "a$b%c"\n': [
        ('w', 'x', 1, 1, 1, 0),
        ('=', '=', 1, 3, 1, 2),
        ('"', '"', 1, 5, 1, 4),
        ('s', 'a$b%c', 1, 6, 1, 5),
        ('"e', '"', 1, 11, 1, 10),
        ('nl', '\n', 1, 12, 2, 11),
        ('eof', '', 1, 12, 1, 12),
    ],
    'x = "p-${var.x}-q"\n': [
        ('w', 'x', 1, 1, 1, 0),
        ('=', '=', 1, 3, 1, 2),
        ('"', '"', 1, 5, 1, 4),
        ('s', 'p-', 1, 6, 1, 5),
        ('${', '${', 1, 8, 1, 7),
        ('w', 'var', 1, 10, 1, 9),
        ('.', '.', 1, 13, 1, 12),
        ('w', 'x', 1, 14, 1, 13),
        ('}', '}', 1, 15, 1, 14),
        ('s', '-q', 1, 16, 1, 15),
        ('"e', '"', 1, 18, 1, 17),
        ('nl', '\n', 1, 19, 2, 18),
        ('eof', '', 1, 19, 1, 19),
    ],
}


@pytest.mark.parametrize("text", list(CASES))
def test_plain_strings_tokenize_as_string_mode_did(text: str):
    assert tokenize(text) == CASES[text]
