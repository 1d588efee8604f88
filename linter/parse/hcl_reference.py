"""The reference HCL parser: python-hcl2 8.1.4's Lark LALR parse (its grammar
with HCL's newline rule, hcl_grammar.py) converted once into hcl.py's
dataclasses. hcl_descent.py is the parser the tool uses; this one stays as
the design card's reference for the differential tests
(tests/terraform/test_hcl_differential.py) and as the fallback when the
fast parser fails internally. Lark is imported on first use.
"""

from __future__ import annotations

from typing import Any

from .hcl import (
    Attribute, BinaryOp, Block, Conditional, Expr, ForExpr, FunctionCall, GetAttr, HclBody, HclSyntaxError,
    Index, Literal, ObjectExpr, ObjectItem, Parenthesis, Splat, Step, TupleExpr, Traversal, UnaryOp,
    _Directive, _finish_template, _heredoc_expr, _unescape, check_heredocs_closed,
)


class _Converter:
    """One pass over the Lark tree. ``dl``/``dc`` shift positions for
    expressions re-parsed out of heredocs and JSON strings."""

    __slots__ = ("dl", "dc", "_rules")

    def __init__(self, dl: int = 0, dc: int = 0) -> None:
        self.dl = dl
        self.dc = dc
        self._rules = {
            "expr_term": self._expr_term,
            "conditional": self._conditional,
            "binary_op": self._binary_op,
            "unary_op": self._unary_op,
        }

    def pos(self, node: Any) -> tuple[int, int]:
        # Trees carry .meta; Tokens carry .line/.column directly.
        meta = getattr(node, "meta", None)
        if meta is not None and not getattr(meta, "empty", True):
            line, col = meta.line, meta.column
        else:
            line, col = getattr(node, "line", None) or 1, getattr(node, "column", None) or 1
        if line == 1:
            col += self.dc
        return line + self.dl, col

    def end_line(self, node: Any) -> int:
        meta = getattr(node, "meta", None)
        if meta is not None and not getattr(meta, "empty", True):
            return meta.end_line + self.dl
        return self.pos(node)[0]

    # -- structure ----------------------------------------------------------
    def body(self, tree: Any, into: Any) -> None:
        for child in tree.children:
            data = getattr(child, "data", None)
            if data == "attribute":
                name_node = child.children[0]
                name = self._name(name_node)
                line, col = self.pos(child)
                into.attributes[name] = Attribute(name, self.expr(child.children[2]), line, col,
                                                  self.end_line(child))
            elif data == "block":
                into.blocks.append(self.block(child))

    def block(self, tree: Any) -> Block:
        children = tree.children
        type_name = self._name(children[0])
        labels: list[str] = []
        body = None
        for child in children[1:]:
            data = getattr(child, "data", None)
            if data == "body":
                body = child
                break
            if data == "string":
                labels.append(self._plain_string(child))
            elif data in ("identifier", "keyword", "literal_value"):
                labels.append(self._name(child))
        line, col = self.pos(tree)
        blk = Block(type_name, labels, {}, [], line, self.end_line(tree), col)
        if body is not None:
            self.body(body, blk)
        return blk

    def _name(self, node: Any) -> str:
        if hasattr(node, "children"):
            return str(node.children[0])
        return str(node)

    def _plain_string(self, tree: Any) -> str:
        out = []
        for part in tree.children:
            if getattr(part, "data", None) == "string_part":
                inner = part.children[0]
                if hasattr(inner, "data"):
                    continue  # an interpolation in a block label: not valid HCL, ignore
                out.append(_unescape(str(inner)))
        return "".join(out)

    # -- expressions --------------------------------------------------------
    def expr(self, node: Any) -> Expr:
        data = node.data
        handler = self._rules.get(data)
        if handler is not None:
            return handler(node)
        return self._term(node)

    def _conditional(self, node: Any) -> Expr:
        exprs = [c for c in node.children if hasattr(c, "data") and c.data != "new_line_or_comment"]
        line, col = self.pos(node)
        return Conditional(self.expr(exprs[0]), self.expr(exprs[1]), self.expr(exprs[2]), line, col)

    def _binary_op(self, node: Any) -> Expr:
        left = node.children[0]
        term = node.children[1]
        op_node = term.children[0]
        op = str(op_node.children[0]).strip()
        right = [c for c in term.children[1:] if hasattr(c, "data") and c.data != "new_line_or_comment"][0]
        line, col = self.pos(node)
        return BinaryOp(op, self.expr(left), self.expr(right), line, col)

    def _unary_op(self, node: Any) -> Expr:
        op = str(node.children[0])
        line, col = self.pos(node)
        operand = self.expr(node.children[1])
        if op == "-" and isinstance(operand, Literal) and isinstance(operand.value, (int, float)) \
                and not isinstance(operand.value, bool):
            return Literal(-operand.value, line, col)
        return UnaryOp(op, operand, line, col)

    def _expr_term(self, node: Any) -> Expr:
        children = [c for c in node.children if getattr(c, "data", None) != "new_line_or_comment"]
        first = children[0]
        if not hasattr(first, "data"):  # "(" expression ")"
            line, col = self.pos(node)
            inner = [c for c in children if hasattr(c, "data")][0]
            return Parenthesis(self.expr(inner), line, col)
        return self._term(first)

    def _term(self, node: Any) -> Expr:
        data = node.data
        line, col = self.pos(node)
        if data == "expr_term":
            return self._expr_term(node)
        if data == "int_lit":
            digits = str(node.children[0])
            # Over Python's 4,300-digit int() limit: a float (inf), as 1e999 is;
            # the model makes it unknown (issue 16, item 12).
            return Literal(int(digits) if len(digits) <= 4000 else float(digits), line, col)
        if data == "float_lit":
            text = str(node.children[0])
            value = float(text)
            return Literal(int(value) if value.is_integer() and abs(value) < 2 ** 63 else value, line, col)
        if data == "literal_value":
            return Literal({"true": True, "false": False, "null": None}[str(node.children[0])], line, col)
        if data == "identifier":
            return Traversal(str(node.children[0]), (), line, col)
        if data == "keyword":
            return Traversal(str(node.children[0]), (), line, col)
        if data == "string":
            return self._string(node)
        if data == "template_string":
            text = str(node.children[0])
            return Literal(_unescape(text[2:-2]), line, col)
        if data in ("heredoc_template", "heredoc_template_trim"):
            return self._heredoc(str(node.children[0]), data.endswith("trim"), line, col)
        if data == "tuple":
            items = [self.expr(c) for c in node.children if hasattr(c, "data") and c.data != "new_line_or_comment"]
            return TupleExpr(items, line, col)
        if data == "object":
            return self._object(node, line, col)
        if data == "function_call":
            return self._function_call(node, line, col)
        if data in ("index_expr_term", "get_attr_expr_term", "attr_splat_expr_term", "full_splat_expr_term"):
            return self._traversal(node)
        if data == "for_tuple_expr":
            return self._for(node, False, line, col)
        if data == "for_object_expr":
            return self._for(node, True, line, col)
        if data in self._rules:
            return self._rules[data](node)
        raise HclSyntaxError(f"unsupported expression ({data})", line, col)

    def _string(self, node: Any) -> Expr:
        line, col = self.pos(node)
        parts: list = []
        for part in node.children:
            if getattr(part, "data", None) != "string_part":
                continue
            inner = part.children[0]
            if not hasattr(inner, "data"):
                kind = inner.type
                text = str(inner)
                if kind == "STRING_CHARS":
                    parts.append(_unescape(text))
                else:  # ESCAPED_INTERPOLATION $${..} / ESCAPED_DIRECTIVE %%{..}
                    parts.append(text[1:])
                continue
            kind = inner.data
            if kind == "interpolation":
                parts.append(self.expr([c for c in inner.children if hasattr(c, "data")][0]))
            else:
                parts.append(self._directive(inner))
        return _finish_template(parts, line, col, heredoc=False)

    def _directive(self, node: Any) -> "_Directive":
        kind = node.data
        strip_left = strip_right = False
        tokens = [c for c in node.children if not hasattr(c, "data")]
        # `~` right after %{ strips left; `~` right before } strips right
        for i, tok in enumerate(tokens):
            if tok.type == "STRIP_MARKER":
                if i == 1:
                    strip_left = True
                else:
                    strip_right = True
        line, col = self.pos(node)
        exprs = [c for c in node.children if hasattr(c, "data")]
        if kind == "template_if_start":
            return _Directive("if", strip_left, strip_right, line, col, expr=self.expr(exprs[0]))
        if kind == "template_for_start":
            names = [str(c.children[0]) for c in exprs if c.data == "identifier"]
            coll = [c for c in exprs if c.data != "identifier"]
            return _Directive("for", strip_left, strip_right, line, col,
                              expr=self.expr(coll[0]) if coll else Literal(None, line, col), names=names)
        return _Directive({"template_else": "else", "template_endif": "endif",
                           "template_endfor": "endfor"}[kind], strip_left, strip_right, line, col)

    def _heredoc(self, raw: str, trim: bool, line: int, col: int) -> Expr:
        return _heredoc_expr(raw, trim, line, col)

    def _object(self, node: Any, line: int, col: int) -> Expr:
        items = []
        for elem in node.children:
            if getattr(elem, "data", None) != "object_elem":
                continue
            key_node = elem.children[0]
            value_node = elem.children[2]
            key_inner = key_node.children[0]
            kline, kcol = self.pos(elem)
            if getattr(key_inner, "data", None) == "keyword":
                key: Expr = Literal(str(key_inner.children[0]), kline, kcol)
            else:
                key = self.expr(key_inner)
                if isinstance(key, Traversal) and key.source is None and not key.steps:
                    key = Literal(key.root, key.line, key.column)  # bare name key
            items.append(ObjectItem(key, self.expr(value_node), kline, kcol))
        return ObjectExpr(items, line, col)

    def _function_call(self, node: Any, line: int, col: int) -> Expr:
        names = [str(c.children[0]) for c in node.children if getattr(c, "data", None) == "identifier"]
        name = "::".join(names)
        args: list = []
        expand = False
        for c in node.children:
            if getattr(c, "data", None) == "arguments":
                for a in c.children:
                    if hasattr(a, "data"):
                        if a.data != "new_line_or_comment":
                            args.append(self.expr(a))
                    elif a.type == "ELLIPSIS":
                        expand = True
        return FunctionCall(name, args, expand, line, col)

    def _traversal(self, node: Any) -> Expr:
        # Walk down the left spine collecting steps, then reverse.
        steps: list = []
        cur = node
        while True:
            data = getattr(cur, "data", None)
            if data == "expr_term" and len(cur.children) == 1 and hasattr(cur.children[0], "data"):
                cur = cur.children[0]
                continue
            if data == "get_attr_expr_term":
                steps.append(self._step(cur.children[1]))
            elif data == "index_expr_term":
                steps.append(self._step(cur.children[1]))
            elif data in ("attr_splat_expr_term", "full_splat_expr_term"):
                steps.append(self._step(cur.children[1]))
            else:
                break
            cur = cur.children[0]
        steps.reverse()
        line, col = self.pos(node)
        root_expr = self._term(cur)
        if isinstance(root_expr, Traversal) and root_expr.source is None and not root_expr.steps:
            return Traversal(root_expr.root, tuple(steps), line, col)
        return Traversal(None, tuple(steps), line, col, source=root_expr)

    def _step(self, node: Any) -> Step:
        data = node.data
        if data == "get_attr":
            return GetAttr(self._name([c for c in node.children if hasattr(c, "data")][0]))
        if data == "braces_index":
            return Index(self.expr([c for c in node.children if hasattr(c, "data")
                                    and c.data != "new_line_or_comment"][0]))
        if data == "short_index":
            tok = [c for c in node.children if not hasattr(c, "data") and c.type == "INT_LITERAL"][0]
            line, col = self.pos(tok)
            return Index(Literal(int(str(tok)), line, col))
        if data in ("attr_splat", "full_splat"):
            inner = tuple(self._step(c) for c in node.children if hasattr(c, "data"))
            return Splat(inner, full=data == "full_splat")
        line, col = self.pos(node)
        raise HclSyntaxError(f"unsupported traversal step ({data})", line, col)

    def _for(self, node: Any, is_object: bool, line: int, col: int) -> Expr:
        parts = [c for c in node.children if hasattr(c, "data") and c.data != "new_line_or_comment"]
        intro = parts[0]
        intro_parts = [c for c in intro.children if hasattr(c, "data") and c.data != "new_line_or_comment"]
        names = [str(c.children[0]) for c in intro_parts if c.data == "identifier"]
        coll = [c for c in intro_parts if c.data != "identifier"][0]
        if len(names) == 2:
            key_var, value_var = names
        else:
            key_var, value_var = None, names[0]
        rest = parts[1:]
        cond = None
        if rest and rest[-1].data == "for_cond":
            cond_node = rest.pop()
            cond = self.expr([c for c in cond_node.children if hasattr(c, "data")
                              and c.data != "new_line_or_comment"][0])
        grouping = any(not hasattr(c, "data") and c.type == "ELLIPSIS" for c in node.children)
        if is_object:
            return ForExpr(key_var, value_var, self.expr(coll), self.expr(rest[0]), self.expr(rest[1]),
                           cond, grouping, line, col)
        return ForExpr(key_var, value_var, self.expr(coll), None, self.expr(rest[0]), cond, False, line, col)



def _lark_error(exc: Exception) -> HclSyntaxError:
    line = getattr(exc, "line", None)
    col = getattr(exc, "column", None)
    line = line if isinstance(line, int) and line > 0 else 1
    col = col if isinstance(col, int) and col > 0 else 1
    token = getattr(exc, "token", None)
    if token is not None:
        text = str(token)
        if getattr(token, "type", "") == "$END":
            return HclSyntaxError("unexpected end of file", line, col)
        if not text.strip():
            text = "newline" if "\n" in text else "whitespace"
            return HclSyntaxError(f"unexpected {text}", line, col)
        text = text.strip().splitlines()[0]
        if len(text) > 30:
            text = text[:27] + "..."
        if getattr(token, "type", "") == "$END":
            message = "unexpected end of file"
        else:
            message = f"unexpected {text!r}"
    elif getattr(exc, "char", None) is not None:
        message = f"unexpected character {exc.char!r}"
    else:
        message = "invalid HCL syntax"
    return HclSyntaxError(message, line, col)


def _parse_tree(text: str) -> Any:
    from lark.exceptions import LarkError, UnexpectedInput

    from .hcl_grammar import parse_to_tree

    try:
        return parse_to_tree(text)
    except UnexpectedInput as exc:
        raise _lark_error(exc) from None
    except RecursionError:
        raise HclSyntaxError("nesting too deep", 1, 1) from None
    except LarkError as exc:
        raise HclSyntaxError(f"invalid HCL syntax ({type(exc).__name__})", 1, 1) from None


def parse_hcl_reference(text: str, path: str) -> HclBody:
    """Parse a whole .tf / .tfvars file. Raises only HclSyntaxError."""
    check_heredocs_closed(text)
    try:
        tree = _parse_tree(text)
        body_tree = tree.children[0]
        result = HclBody(path, {}, [], 1)
        _Converter().body(body_tree, result)
        return result
    except HclSyntaxError:
        raise
    except RecursionError:
        raise HclSyntaxError("nesting too deep", 1, 1) from None
    except Exception as exc:  # never let a converter bug escape as a crash
        raise HclSyntaxError(f"cannot read HCL ({type(exc).__name__})", 1, 1) from None


def parse_expression_reference(text: str, line: int = 1, column: int = 1) -> Expr:
    """Parse one expression written at ``line``/``column`` of its file."""
    source = "x=" + text.strip("\r\n")
    lead = len(text) - len(text.lstrip("\r\n"))
    # keep positions exact: leading newlines move the start line
    if lead:
        line += text[:lead].count("\n")
        column = 1
    try:
        tree = _parse_tree(source)
    except HclSyntaxError as exc:
        el = exc.line + line - 1
        ec = exc.column + (column - 3 if exc.line == 1 else 0)
        raise HclSyntaxError(exc.message, el, max(ec, 1)) from None
    body = tree.children[0]
    attrs = [c for c in body.children if getattr(c, "data", None) == "attribute"]
    if len(attrs) != 1:
        raise HclSyntaxError("expected one expression", line, column)
    conv = _Converter(dl=line - 1, dc=column - 3)
    try:
        return conv.expr(attrs[0].children[2])
    except RecursionError:
        raise HclSyntaxError("nesting too deep", line, column) from None


