"""python-hcl2's grammar, with HCL's rule for newlines inside brackets.

HCL ignores newlines inside ``( )``, ``[ ]``, template interpolations
``${ }`` / ``%{ }`` and ``{ for ... }`` expressions (hclsyntax's parser turns
newline tokens off there). python-hcl2 8.1.4's grammar allows them only at a
few fixed places, so valid files that ``terraform fmt`` accepts are rejected,
for example::

    name = "gke-${
      var.regional ? "r" : "z"
    }-pool"

    compute_partitions = {
      for p in var.partitions
      : p.name
      => p
    }

Rather than fork the grammar, this builds the same grammar (same file, same
options, so it shares python-hcl2's grammar cache) with one more post-lexer
pass: it tracks the bracket nesting and drops newline/comment tokens where HCL
ignores them. Object constructors and block bodies, where a newline separates
items, keep theirs, also when nested inside a bracket.
"""

from __future__ import annotations

import functools
from typing import Any, Iterator

# The lexer must hand newlines to the post-lexer in every parser state, also
# where the grammar would reject them; the post-lexer then drops them there.
_NEWLINE = "NL_OR_COMMENT"

# Openers after which newlines are insignificant until the matching closer.
_IGNORING_OPENERS = frozenset({"LPAR", "LSQB", "INTERP_START", "DIRECTIVE_START"})
_CLOSERS = frozenset({"RPAR", "RSQB", "RBRACE"})
# Tokens after which a `{` starts a block body, not an expression.
_BLOCK_HEADER_ENDS = frozenset({"NAME", "DBLQUOTE", "FOR_EACH", "IN", "FOR", "IF", "ELSE",
                                "ENDIF", "ENDFOR", "NULL", "TRUE", "FALSE"})


def _drop_insignificant_newlines(stream: Iterator[Any]) -> Iterator[Any]:
    # Each entry: True when newlines are ignored at that nesting level.
    ignoring: list[bool] = []
    previous = ""           # type of the last significant token
    brace_pending = False   # a `{` in expression position whose first token decides
    held: list[Any] = []    # newlines seen right after that `{`
    for token in stream:
        kind = token.type
        if brace_pending:
            if kind == _NEWLINE:
                held.append(token)
                continue
            brace_pending = False
            if kind == "FOR":       # `{ for ...}`: an expression, newlines ignored
                ignoring[-1] = True
                held.clear()
            else:
                yield from held
                held.clear()
        if kind == _NEWLINE:
            if ignoring and ignoring[-1]:
                continue
            yield token
            continue
        if kind in _IGNORING_OPENERS:
            ignoring.append(True)
        elif kind == "LBRACE":
            ignoring.append(False)
            brace_pending = previous not in _BLOCK_HEADER_ENDS
        elif kind in _CLOSERS and ignoring:
            ignoring.pop()
        previous = kind
        yield token
    yield from held


@functools.lru_cache(maxsize=1)
def hcl_parser() -> Any:
    """The Lark LALR parser for HCL2 (built once per process)."""
    from hcl2 import parser as hcl2_parser
    from hcl2.postlexer import PostLexer
    from lark import Lark

    class NewlineAwarePostLexer(PostLexer):
        def process(self, stream):  # type: ignore[override]
            return super().process(_drop_insignificant_newlines(stream))

        @property
        def always_accept(self):  # type: ignore[override]
            return (_NEWLINE,)

    # Same grammar file and options as hcl2.parser.parser(): the grammar cache
    # key does not include the post-lexer, so its cache file serves both.
    return Lark.open(
        "hcl2.lark",
        parser="lalr",
        cache=str(hcl2_parser.PARSER_FILE),
        rel_to=hcl2_parser.__file__,
        propagate_positions=True,
        postlex=NewlineAwarePostLexer(),
    )


def parse_to_tree(text: str) -> Any:
    """Parse HCL text to python-hcl2's Lark tree (as ``hcl2.parses_to_tree``)."""
    # The trailing newline is python-hcl2's own workaround: the grammar has no
    # end-of-file token.
    return hcl_parser().parse(text + "\n")
