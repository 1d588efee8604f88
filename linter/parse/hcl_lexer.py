"""A hand-written lexer for HCL native syntax (hcl_descent.py's input).

One compiled master regex, matched at a position (no search, no
backtracking-prone pattern), with a mode stack for quoted strings and their
``${ }`` / ``%{ }`` parts. It produces the token stream python-hcl2's Lark
lexer and post-lexers give the reference parser (hcl_reference.py), so that
the two parsers agree on every position and on python-hcl2's leniencies:

- newline and comment tokens are dropped inside ``( )``, ``[ ]``, ``${ }``,
  ``%{ }`` and ``{ for ... }`` (hcl_grammar._drop_insignificant_newlines);
- a newline right before a binary operator or ``?`` is dropped (python-hcl2's
  PostLexer merges it into the operator);
- comments are newline tokens (``# x\\n`` includes its newline; so does a
  heredoc token, whose end line is the line after its closing marker).

A token is a tuple ``(kind, text, line, column, end_line, offset)``. Kinds:
``nl``, ``w`` (a word: identifier or keyword), ``int``, ``float``, ``<<``
(a heredoc), ``tstr`` (``\\"..\\"``), ``"`` and ``"e`` (opening and closing
quote), ``s`` (string characters), ``esc`` (``$${..}`` / ``%%{..}``), ``${``,
``%{``, the punctuation itself (``(``, ``==``, ``.*``, ``[*]`` ...), ``err``
(a character no token starts with: the parser reports it when it gets there,
as Lark's lazy lexer does) and ``eof`` (at the position of the last token,
as Lark's ``$END``).
"""

from __future__ import annotations

import re

_CODE = re.compile(
    r"[ \t\r]*(?:"
    r"(\n[ \t]*|#[^\n]*\n|//[^\n]*\n|/\*[\s\S]*?\*/)"                    # 1 nl
    r"|([^\W\d][\w-]*)"                                                  # 2 word
    r"|([0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)?)"         # 3 number
    r"|(<<-?[A-Za-z][A-Za-z0-9._-]*\r?\n)"                               # 4 heredoc opener
    r"|(==|!=|<=|>=|&&|\|\||=>|\.\.\.|::|\.\*|\[\*\]|[$%]\{|[-+*/%<>!?=:(){}\[\],.~])"  # 5 punctuation
    r'|("(?:[^"\\$%\n]*")?)'                                             # 6 quote (with a simple string's rest)
    r'|(\\"(?:[^"\\]|\\\\.)*\\")'                                         # 7 \"template string\"
    r")"
)
_INT = re.compile(r"[0-9]+")
_STRING_CHARS = re.compile(r'(?:[^"\\$%]|\\.|\$(?!\$?\{)|%(?!%?\{))+')
_ESCAPED = re.compile(r"(?:\$\$|%%)\{[^}]*\}")
_SPACE = re.compile(r"[ \t\r]*")

# Tokens after which a `{` opens a block body (hcl_grammar._BLOCK_HEADER_ENDS).
_HEADER_ENDS = frozenset({"w", '"', '"e'})
# Operators a preceding newline merges into (hcl2.postlexer.OPERATOR_TYPES).
_MERGING = frozenset({"==", "!=", "<", ">", "<=", ">=", "*", "/", "%", "&&", "||", "+", "?"})
_IGNORING_OPENERS = frozenset({"(", "[", "${", "%{"})
# Punctuation no post-lexer step acts on (not an opener, a closer, "{" or a merging operator).
_PLAIN_PUNCT = frozenset({"=", ".", ",", ":", "=>", "...", "::", ".*", "[*]", "!", "-", "~"})
_CLOSERS = frozenset({")", "]", "}"})

_close_cache: dict[str, "re.Pattern[str]"] = {}


def _heredoc_close(mark: str) -> "re.Pattern[str]":
    pat = _close_cache.get(mark)
    if pat is None:
        if len(_close_cache) > 256:
            _close_cache.clear()
        pat = _close_cache[mark] = re.compile(r"\n[^\S\n]*" + re.escape(mark) + r"\r?\n")
    return pat


def tokenize(text: str, line: int = 1, column: int = 1) -> list:
    """Tokens of ``text`` (which must end with a newline, as python-hcl2's
    parse does), positions counted from ``line``/``column``."""
    toks: list = []
    append = toks.append
    pos = 0
    n = len(text)
    line_start = 1 - column         # offset such that pos - line_start + 1 is the column
    modes: list[str] = []           # "s" string, "i" interpolation/directive, "b" brace
    ignoring: list[bool] = []
    previous = ""
    brace_pending = False
    held: list = []
    code_match = _CODE.match
    in_string = False
    while pos < n:
        if in_string:
            ch = text[pos]
            if ch == '"':
                tok = ('"e', '"', line, pos - line_start + 1, line, pos)
                pos += 1
                modes.pop()
                in_string = False
            elif (ch == "$" or ch == "%") and text.startswith("{", pos + 1):
                kind = ch + "{"
                tok = (kind, kind, line, pos - line_start + 1, line, pos)
                pos += 2
                modes.append("i")
                in_string = False
            else:
                # `$${` / `%%{` escapes, else a run of literal characters
                escaped = (ch == "$" or ch == "%") and text.startswith(ch + "{", pos + 1)
                m = (_ESCAPED if escaped else _STRING_CHARS).match(text, pos)
                if m is None:
                    append(("err", ch, line, pos - line_start + 1, line, pos))
                    break
                value = m.group()
                nl = value.count("\n")
                tok = ("esc" if escaped else "s", value, line, pos - line_start + 1, line + nl, pos)
                pos = m.end()
                if nl:
                    line += nl
                    line_start = pos - (len(value) - value.rindex("\n")) + 1
            kind = tok[0]
        else:
            m = code_match(text, pos)
            group = m.lastindex if m is not None else None
            if group is None:
                sp = _SPACE.match(text, pos).end()
                if sp >= n:
                    break
                append(("err", text[sp], line, sp - line_start + 1, line, sp))
                break
            # the group found ends the match: one call for both ends
            start, pos = m.span(group)
            value = text[start:pos]
            col = start - line_start + 1
            if group == 1:
                nl = value.count("\n")
                tok = ("nl", value, line, col, line + nl, start)
                if nl:
                    line += nl
                    line_start = start + value.rindex("\n") + 1
                if brace_pending:
                    held.append(tok)
                elif not (ignoring and ignoring[-1]):
                    append(tok)
                continue
            if group == 2:
                tok = ("w", value, line, col, line, start)
                if not brace_pending:
                    # no post-lexer step applies to a word unless it follows a "{" ("{ for")
                    previous = "w"
                    append(tok)
                    continue
            elif group == 3:
                if previous == ".":
                    m2 = _INT.match(text, start)
                    value = m2.group()
                    pos = m2.end()
                    tok = ("int", value, line, col, line, start)
                elif value.isdigit():
                    tok = ("int", value, line, col, line, start)
                else:
                    tok = ("float", value, line, col, line, start)
                if not brace_pending:
                    previous = tok[0]
                    append(tok)
                    continue
            elif group == 5:
                tok = (value, value, line, col, line, start)
                if value in _PLAIN_PUNCT and not brace_pending:
                    # no post-lexer step applies to it (most punctuation: "=", ".", ",")
                    previous = value
                    append(tok)
                    continue
                if value == "{":
                    modes.append("b")
                elif value == "}" and modes:
                    if modes.pop() == "i":
                        in_string = True
            elif group == 6:
                tok = ('"', '"', line, col, line, start)
                if len(value) == 1:
                    modes.append("s")
                    in_string = True
                else:
                    # "text" without escapes, interpolation or a newline (most
                    # strings, matched whole): its three tokens at once, as string mode makes them
                    if brace_pending:
                        brace_pending = False
                        toks.extend(held)
                        held.clear()
                    append(tok)
                    if len(value) > 2:
                        append(("s", value[1:-1], line, col + 1, line, start + 1))
                    end = pos - 1
                    previous = '"e'
                    append(('"e', '"', line, col + len(value) - 1, line, end))
                    continue
            elif group == 4:
                trim = value[2] == "-"
                mark = value[3 if trim else 2:].rstrip("\r\n")
                found = _heredoc_close(mark).search(text, pos - 1)
                if found is None:
                    tok = ("<", "<", line, col, line, start)
                    pos = start + 1
                else:
                    value = text[start:found.end()]
                    nl = value.count("\n")
                    tok = ("<<", value, line, col, line + nl, start)
                    pos = found.end()
                    line += nl
                    line_start = pos
            else:  # 7
                nl = value.count("\n")
                tok = ("tstr", value, line, col, line + nl, start)
                if nl:
                    line += nl
                    line_start = start + value.rindex("\n") + 1
            kind = tok[0]
        # python-hcl2's post-lexers, as hcl_grammar.py and hcl2.postlexer do them
        if brace_pending:
            brace_pending = False
            if kind == "w" and tok[1] == "for":
                ignoring[-1] = True
                held.clear()
            else:
                toks.extend(held)
                held.clear()
        if kind in _IGNORING_OPENERS:
            ignoring.append(True)
        elif kind == "{":
            ignoring.append(False)
            brace_pending = previous not in _HEADER_ENDS
        elif kind in _CLOSERS and ignoring:
            ignoring.pop()
        if kind in _MERGING and toks and toks[-1][0] == "nl":
            toks.pop()
        previous = kind
        append(tok)
    toks.extend(held)
    if toks:
        last = toks[-1]
        append(("eof", "", last[2], last[3], last[2], n))
    else:
        append(("eof", "", 1, 1, 1, n))
    return toks
