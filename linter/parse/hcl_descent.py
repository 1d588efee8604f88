"""A recursive-descent parser for HCL native syntax over hcl_lexer's tokens.

It builds hcl.py's dataclasses directly and mirrors python-hcl2 8.1.4's
grammar (the reference, hcl_reference.py), its positions included:

- every node's line/column is its first token's (Lark's propagate_positions);
- an attribute ends on its last token's end line; a binary operation takes
  the newlines and comments that follow it (Lark resolves that shift/reduce
  conflict by shifting), so its attribute ends where the next item starts;
- block bodies and objects need no separator between items (python-hcl2
  accepts ``a { b = 1 c = 2 }``).

It accepts valid HCL the reference rejects in a few places: unicode
identifiers, ``${~ x ~}`` strip markers on interpolations.
Nesting is bounded by an explicit counter (``nesting too deep``).
"""

from __future__ import annotations

import sys

from .hcl import (
    Attribute, BinaryOp, Block, Conditional, ForExpr, FunctionCall, GetAttr, HclBody, HclSyntaxError, Index,
    Literal, ObjectExpr, ObjectItem, Parenthesis, Splat, TupleExpr, Traversal, UnaryOp, _Directive,
    _finish_template, _heredoc_expr, _unescape,
)
from .hcl_lexer import _STRING_CHARS, tokenize

MAX_NESTING = 400
_FRAMES_PER_LEVEL = 8

_BINARY = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4,
           "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}
_LITERAL_WORDS = {"true": True, "false": False, "null": None}
_KEYWORDS = frozenset({"in", "for", "if", "for_each", "else", "endif", "endfor"})
# Tokens that can end an expression (see _Parser.error).
_ENDS_EXPR = frozenset({"w", "int", "float", '"e', ")", "]", "}", "<<", "tstr", "nl", ".*", "[*]"})


def _int_value(digits: str) -> "int | float":
    # Over Python's 4,300-digit int() limit: a float (inf), as 1e999 is.
    return int(digits) if len(digits) <= 4000 else float(digits)


def _float_value(text: str) -> "int | float":
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2 ** 63 else value


class _Parser:
    __slots__ = ("t", "i", "text", "depth")

    def __init__(self, toks: list, text: str) -> None:
        self.t = toks
        self.i = 0
        self.text = text
        self.depth = 0

    # -- errors -----------------------------------------------------------
    def error(self, tok: tuple) -> HclSyntaxError:
        kind, text, line, col = tok[0], tok[1], tok[2], tok[3]
        if kind == "eof":
            # at the last token, as Lark's $END; an EQ / COLON starts at its blanks
            last = len(self.t) - 2
            if last >= 1 and self.t[last][0] in ("=", ":"):
                col = self._blank_start(last, col)
            return HclSyntaxError("unexpected end of file", line, col)
        if kind != "nl":
            i = self.i if self.t[self.i] is tok else self.i - 1
            j = i - 1
            while j >= 0 and self.t[j][0] == "nl":
                j -= 1
            before = self.t[j][0] if j >= 0 else ""
            # "expression NL" may go on (a tuple's "]", an object's ","); right
            # after a block's "}" nothing may follow on the line
            if kind != "err" and before in _ENDS_EXPR and (j < i - 1 or before != "}"):
                if kind in ("=", ":"):
                    col = self._blank_start(i, col)
            elif not self.text.startswith('"', tok[5]):
                # Elsewhere the contextual lexer finds no token and Lark reports
                # its root lexer's, python-hcl2's STRING_CHARS (priority 1).
                m = _STRING_CHARS.match(self.text, tok[5])
                if m is not None:
                    text = m.group()
                elif kind == "err":
                    return HclSyntaxError(f"unexpected character {text!r}", line, col)
        if not text.strip():
            return HclSyntaxError("unexpected newline" if "\n" in text else "unexpected whitespace", line, col)
        text = text.strip().splitlines()[0]
        if len(text) > 30:
            text = text[:27] + "..."
        return HclSyntaxError(f"unexpected {text!r}", line, col)

    def _blank_start(self, i: int, col: int) -> int:
        """python-hcl2's EQ / COLON patterns take the blanks before them."""
        off = self.t[i][5]
        floor = self.t[i - 1][5] + len(self.t[i - 1][1])
        while col > 1 and off > floor and self.text[off - 1] in " \t":
            off -= 1
            col -= 1
        return col

    def expect(self, kind: str) -> tuple:
        tok = self.t[self.i]
        if tok[0] != kind:
            raise self.error(tok)
        self.i += 1
        return tok

    def skip_nl(self) -> None:
        t = self.t
        while t[self.i][0] == "nl":
            self.i += 1

    def enter(self, tok: tuple) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise HclSyntaxError("nesting too deep", 1, 1)

    # -- structure --------------------------------------------------------
    def body(self, into, closer: str) -> None:
        t = self.t
        while True:
            tok = t[self.i]
            kind = tok[0]
            if kind == "nl":
                self.i += 1
                continue
            if kind == closer:
                return
            if kind != "w":
                raise self.error(tok)
            nxt = t[self.i + 1]
            if nxt[0] == "=":
                self.i += 2
                expr = self.expression()
                end = t[self.i - 1][4]
                into.attributes[tok[1]] = Attribute(tok[1], expr, tok[2], tok[3], end)
            else:
                into.blocks.append(self.block())

    def block(self) -> Block:
        t = self.t
        head = t[self.i]
        self.i += 1
        labels: list = []
        while True:
            tok = t[self.i]
            kind = tok[0]
            if kind == "w":
                labels.append(tok[1])
                self.i += 1
            elif kind == '"':
                labels.append(self.label())
            else:
                break
        self.skip_nl()
        self.expect("{")
        self.enter(head)
        blk = Block(head[1], labels, {}, [], head[2], head[2], head[3])
        self.body(blk, "}")
        blk.end_line = self.t[self.i][4]
        self.i += 1
        self.depth -= 1
        return blk

    def label(self) -> str:
        # A quoted block label: its text; interpolations in it are ignored.
        start = self.i
        self.string()
        out = []
        for tok in self.t[start:self.i]:
            if tok[0] in ("s", "esc"):
                out.append(_unescape(tok[1]))
        return "".join(out)

    # -- expressions ------------------------------------------------------
    def expression(self):
        cond = self.binary(1)
        t = self.t
        if t[self.i][0] != "?":
            return cond
        self.i += 1
        self.skip_nl()
        true = self.expression()
        self.skip_nl()
        self.expect(":")
        self.skip_nl()
        false = self.expression()
        return Conditional(cond, true, false, cond.line, cond.column)

    def binary(self, level: int):
        """Binary operations of ``level`` (1-6, _BINARY) and tighter,
        left-associative. Precedence climbing: one call per operand, where
        one call per level per operand (seven) was a fifth of parsing HCL.
        The ops of one level are consecutive in this loop (a tighter op is
        taken by the right operand's call, a looser one ends it), so the
        chain bound counts as a loop per level did."""
        t = self.t
        left = self.unary()
        current = chain = 0
        while True:
            op = t[self.i][0]
            found = _BINARY.get(op)
            if found is None or found < level:
                return left
            if found != current:
                current, chain = found, self.depth
            # a chain nests its operations (the left one is inside the next):
            # bounded like brackets, so the tree stays picklable and walkable
            chain += 1
            if chain > MAX_NESTING:
                raise HclSyntaxError("nesting too deep", 1, 1)
            self.i += 1
            self.skip_nl()
            right = self.binary(found + 1) if found < 6 else self.unary()
            left = BinaryOp(op, left, right, left.line, left.column)
            self.skip_nl()   # Lark shifts the newlines after a binary operation into it

    def unary(self):
        t = self.t
        tok = t[self.i]
        kind = tok[0]
        if kind == "!" or (kind == "-" and not self._negative_number()):
            self.i += 1
            operand = self.term()
            if kind == "-" and type(operand) is Literal and type(operand.value) in (int, float):
                return Literal(-operand.value, tok[2], tok[3])
            return UnaryOp(kind, operand, tok[2], tok[3])
        return self.term()

    def _negative_number(self) -> bool:
        # python-hcl2 lexes "-1" as one number where an expression starts
        tok, nxt = self.t[self.i], self.t[self.i + 1]
        return nxt[0] in ("int", "float") and nxt[5] == tok[5] + 1

    def term(self):
        t = self.t
        tok = t[self.i]
        kind = tok[0]
        self.i += 1
        line, col = tok[2], tok[3]
        if kind == "w":
            name = tok[1]
            nk = t[self.i][0]
            if nk == "(" or nk == "::":
                expr = self.call(tok)
            elif name in _LITERAL_WORDS:
                expr = Literal(_LITERAL_WORDS[name], line, col)
            else:
                expr = None   # a plain name: the root of a traversal
        elif kind == "int":
            expr = Literal(_int_value(tok[1]), line, col)
        elif kind == "float":
            expr = Literal(_float_value(tok[1]), line, col)
        elif kind == "-":    # a negative number (see _negative_number)
            num = t[self.i]
            self.i += 1
            value = _int_value("-" + num[1]) if num[0] == "int" else _float_value("-" + num[1])
            expr = Literal(value, line, col)
        elif kind == '"':
            self.i -= 1
            expr = self.string()
        elif kind == "(":
            self.enter(tok)
            inner = self.expression()
            self.expect(")")
            self.depth -= 1
            expr = Parenthesis(inner, line, col)
        elif kind == "[":
            expr = self.tuple_or_for(tok)
        elif kind == "{":
            expr = self.object_or_for(tok)
        elif kind == "<<":
            raw = tok[1]
            expr = _heredoc_expr(raw, raw[2] == "-", line, col)
        elif kind == "tstr":
            expr = Literal(_unescape(tok[1][2:-2]), line, col)
        else:
            self.i -= 1
            raise self.error(tok)
        k = t[self.i][0]
        if k not in (".", "[", ".*", "[*]"):
            return Traversal(tok[1], (), line, col) if expr is None else expr
        steps: list = []
        while True:
            k = t[self.i][0]
            if k == "." or k == "[":
                steps.append(self.step())
            elif k == ".*" or k == "[*]":
                self.i += 1
                inner: list = []
                while t[self.i][0] in (".", "["):
                    inner.append(self.step())
                steps.append(Splat(tuple(inner), full=k == "[*]"))
            else:
                break
        if expr is None:
            return Traversal(tok[1], tuple(steps), line, col)
        return Traversal(None, tuple(steps), line, col, source=expr)

    def step(self):
        t = self.t
        tok = t[self.i]
        self.i += 1
        if tok[0] == ".":
            nxt = t[self.i]
            self.i += 1
            if nxt[0] == "w":
                return GetAttr(nxt[1])
            if nxt[0] == "int":
                return Index(Literal(int(nxt[1]), nxt[2], nxt[3]))
            self.i -= 1
            raise self.error(nxt)
        self.enter(tok)
        key = self.expression()
        self.expect("]")
        self.depth -= 1
        return Index(key)

    def call(self, head: tuple):
        t = self.t
        names = [head[1]]
        if t[self.i][0] == "::":
            for _ in range(2):
                self.expect("::")
                names.append(self.expect("w")[1])
        self.expect("(")
        self.enter(head)
        args: list = []
        expand = False
        if t[self.i][0] != ")":
            while True:
                args.append(self.expression())
                k = t[self.i][0]
                if k == ",":
                    self.i += 1
                    if t[self.i][0] == ")":
                        break
                    continue
                if k == "...":
                    self.i += 1
                    expand = True
                break
        self.expect(")")
        self.depth -= 1
        return FunctionCall("::".join(names), args, expand, head[2], head[3])

    def tuple_or_for(self, tok: tuple):
        t = self.t
        self.enter(tok)
        if t[self.i][0] == "w" and t[self.i][1] == "for":
            expr = self.for_expr(tok, "]")
        else:
            items: list = []
            while t[self.i][0] != "]":
                items.append(self.expression())
                if t[self.i][0] != ",":
                    break
                self.i += 1
            self.expect("]")
            expr = TupleExpr(items, tok[2], tok[3])
        self.depth -= 1
        return expr

    def object_or_for(self, tok: tuple):
        t = self.t
        self.enter(tok)
        if t[self.i][0] == "w" and t[self.i][1] == "for" and t[self.i + 1][0] not in ("=", ":"):
            expr = self.for_expr(tok, "}")
            self.depth -= 1
            return expr
        items: list = []
        while True:
            self.skip_nl()
            k = t[self.i]
            if k[0] == "}":
                break
            if k[0] == "w" and k[1] in _KEYWORDS and t[self.i + 1][0] in ("=", ":"):
                key = Literal(k[1], k[2], k[3])
                self.i += 1
            else:
                key = self.expression()
                if type(key) is Traversal and key.source is None and not key.steps:
                    key = Literal(key.root, key.line, key.column)
            if t[self.i][0] not in ("=", ":"):
                raise self.error(t[self.i])
            self.i += 1
            value = self.expression()
            items.append(ObjectItem(key, value, k[2], k[3]))
            self.skip_nl()
            if t[self.i][0] == ",":
                self.i += 1
        self.i += 1
        self.depth -= 1
        return ObjectExpr(items, tok[2], tok[3])

    def for_header(self) -> tuple[list, object]:
        """``NAME [, NAME] in EXPR`` after ``for`` (for-expressions and
        ``%{ for }`` directives): the names and the collection."""
        t = self.t
        names = [self.expect("w")[1]]
        if t[self.i][0] == ",":
            self.i += 1
            names.append(self.expect("w")[1])
        word = t[self.i]
        if word[0] != "w" or word[1] != "in":
            raise self.error(word)
        self.i += 1
        return names, self.expression()

    def for_expr(self, tok: tuple, closer: str):
        t = self.t
        self.i += 1   # for
        names, coll = self.for_header()
        self.expect(":")
        key_var, value_var = (names[0], names[1]) if len(names) == 2 else (None, names[0])
        key = None
        grouping = False
        first = self.expression()
        if closer == "}":
            self.expect("=>")
            key = first
            value = self.expression()
            if t[self.i][0] == "...":
                self.i += 1
                grouping = True
        else:
            value = first
        cond = None
        k = t[self.i]
        if k[0] == "w" and k[1] == "if":
            self.i += 1
            cond = self.expression()
        self.expect(closer)
        return ForExpr(key_var, value_var, coll, key, value, cond, grouping, tok[2], tok[3])

    # -- templates --------------------------------------------------------
    def string(self):
        t = self.t
        open_tok = self.expect('"')
        # Most strings are one run of literal characters (or none): the
        # Literal _finish_template would build, without the parts list.
        tok = t[self.i]
        if tok[0] == "s" and t[self.i + 1][0] == '"e':
            self.i += 2
            return Literal(_unescape(tok[1]), open_tok[2], open_tok[3])
        if tok[0] == '"e':
            self.i += 1
            return Literal("", open_tok[2], open_tok[3])
        parts: list = []
        while True:
            tok = t[self.i]
            kind = tok[0]
            self.i += 1
            if kind == "s":
                parts.append(_unescape(tok[1]))
            elif kind == '"e':
                break
            elif kind == "esc":
                parts.append(tok[1][1:])
            elif kind == "${":
                self.enter(tok)
                sl = t[self.i][0] == "~"
                if sl:
                    self.i += 1
                expr = self.expression()
                sr = t[self.i][0] == "~"
                if sr:
                    self.i += 1
                self.expect("}")
                self.depth -= 1
                parts.append(_Directive("interp", sl, sr, tok[2], tok[3], expr=expr) if sl or sr else expr)
            elif kind == "%{":
                self.enter(tok)
                parts.append(self.directive(tok))
                self.depth -= 1
            else:
                self.i -= 1
                raise self.error(tok)
        if any(type(p) is _Directive and p.kind == "interp" for p in parts):
            from .hcl import _apply_strips
            parts = [p.expr if type(p) is _Directive and p.kind == "interp" else p for p in _apply_strips(parts)]
        return _finish_template(parts, open_tok[2], open_tok[3], heredoc=False)

    def directive(self, tok: tuple) -> _Directive:
        t = self.t
        sl = t[self.i][0] == "~"
        if sl:
            self.i += 1
        word = t[self.i]
        if word[0] != "w" or word[1] not in ("if", "else", "endif", "for", "endfor"):
            raise self.error(word)
        self.i += 1
        kind = word[1]
        expr = None
        names: list = []
        if kind == "if":
            expr = self.expression()
        elif kind == "for":
            names, expr = self.for_header()
        sr = t[self.i][0] == "~"
        if sr:
            self.i += 1
        self.expect("}")
        return _Directive(kind, sl, sr, tok[2], tok[3], expr=expr, names=names)


def _run(fn, *args):
    old = sys.getrecursionlimit()
    need = MAX_NESTING * _FRAMES_PER_LEVEL + 500
    if old < need:
        sys.setrecursionlimit(need)
    try:
        return fn(*args)
    except RecursionError:
        raise HclSyntaxError("nesting too deep", 1, 1) from None
    finally:
        if old < need:
            sys.setrecursionlimit(old)


def _parse_body(text: str, path: str) -> HclBody:
    toks = tokenize(text + "\n")
    p = _Parser(toks, text)
    result = HclBody(path, {}, [], 1)
    p.body(result, "eof")
    return result


def parse_hcl_descent(text: str, path: str) -> HclBody:
    """The whole file (check_heredocs_closed is the caller's)."""
    return _run(_parse_body, text, path)


def _parse_expr(text: str, line: int, column: int):
    source = text.strip("\r\n")
    lead = len(text) - len(text.lstrip("\r\n"))
    if lead:
        line += text[:lead].count("\n")
        column = 1
    toks = tokenize(source + "\n", line, column)
    p = _Parser(toks, source)
    expr = p.expression()
    p.skip_nl()
    tok = toks[p.i]
    if tok[0] != "eof":
        if tok[0] == "w" and toks[p.i + 1][0] == "=":
            raise HclSyntaxError("expected one expression", line, column)
        raise p.error(tok)
    return expr


def parse_expression_descent(text: str, line: int = 1, column: int = 1):
    return _run(_parse_expr, text, line, column)
