"""HCL (Terraform .tf / .tfvars) to a located, picklable expression tree.

Interface (owned by the Terraform work; see mlcost_lint.model.terraform):

    parse_hcl(text: str, path: str) -> HclBody
    parse_expression(text: str, line: int = 1, column: int = 1) -> Expr
    parse_template(text: str, line: int = 1, column: int = 1) -> Expr
    HclSyntaxError(message, line, column)

python-hcl2's Lark tree (its grammar, with HCL's newline rule: see
hcl_grammar.py) is converted once into the
small slotted dataclasses below. Every node carries a 1-based ``line`` and
``column``. Heredocs and template directives are split here, so the
evaluator never sees raw template text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Union


class HclSyntaxError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


# ---------------------------------------------------------------------------
# Expression nodes
# ---------------------------------------------------------------------------

@dataclass(slots=True)
class Literal:
    value: Any                  # str | int | float | bool | None
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class TemplateIf:
    cond: "Expr"
    then: list                  # list[str | Expr | TemplateIf | TemplateFor]
    otherwise: list
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class TemplateFor:
    key_var: str | None
    value_var: str
    collection: "Expr"
    body: list
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class Template:
    """A quoted string or heredoc. ``parts`` are literal text and
    interpolated expressions; a lone ``"${x}"`` keeps x's type (as Terraform)."""
    parts: list                 # list[str | Expr | TemplateIf | TemplateFor]
    line: int = 1
    column: int = 1
    heredoc: bool = False


@dataclass(slots=True)
class GetAttr:
    name: str


@dataclass(slots=True)
class Index:
    key: "Expr"


@dataclass(slots=True)
class Splat:
    """``[*]`` / ``.*``: ``steps`` apply to every element."""
    steps: tuple
    full: bool = True


Step = Union[GetAttr, Index, Splat]


@dataclass(slots=True)
class Traversal:
    """``root.a[0].b``: ``root`` is a name (``var``, ``local``, a resource
    type, a for variable) or, for ``f(x).a`` / ``(x)[0]``, ``source`` is set."""
    root: str | None
    steps: tuple
    line: int = 1
    column: int = 1
    source: "Expr | None" = None


@dataclass(slots=True)
class FunctionCall:
    name: str
    args: list
    expand_final: bool = False  # f(a, list...)
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class TupleExpr:
    items: list
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class ObjectItem:
    key: "Expr"                 # a bare name key is a Literal string
    value: "Expr"
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class ObjectExpr:
    items: list                 # list[ObjectItem]
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class Conditional:
    cond: "Expr"
    true: "Expr"
    false: "Expr"
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class BinaryOp:
    op: str
    left: "Expr"
    right: "Expr"
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class UnaryOp:
    op: str                     # "-" | "!"
    operand: "Expr"
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class ForExpr:
    key_var: str | None
    value_var: str
    collection: "Expr"
    key: "Expr | None"          # set for object for expressions
    value: "Expr"
    cond: "Expr | None" = None
    grouping: bool = False      # `...` after the value
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class Parenthesis:
    expr: "Expr"
    line: int = 1
    column: int = 1


Expr = Union[Literal, Template, Traversal, FunctionCall, TupleExpr, ObjectExpr,
             Conditional, BinaryOp, UnaryOp, ForExpr, Parenthesis]


# ---------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------

@dataclass(slots=True)
class Attribute:
    name: str
    expr: Expr
    line: int = 1
    column: int = 1
    end_line: int = 1


@dataclass(slots=True)
class Block:
    type: str
    labels: list
    attributes: dict = field(default_factory=dict)   # name -> Attribute
    blocks: list = field(default_factory=list)       # list[Block]
    line: int = 1
    end_line: int = 1
    column: int = 1


@dataclass(slots=True)
class HclBody:
    """A whole file: top-level attributes (tfvars) and blocks (.tf)."""
    path: str
    attributes: dict = field(default_factory=dict)
    blocks: list = field(default_factory=list)
    line: int = 1
    end_line: int = 1


# ---------------------------------------------------------------------------
# Conversion from the Lark tree
# ---------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def sub(m: "re.Match[str]") -> str:
        s = m.group(1)
        if s[0] in "uU" and len(s) > 1:
            return chr(int(s[1:], 16))
        return _ESCAPES.get(s, "\\" + s)

    return _ESCAPE_RE.sub(sub, text)


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
        # raw = "<<[-]MARK\n" body "MARK\n"
        first_nl = raw.index("\n")
        marker = raw[2 + trim:first_nl].strip()
        body = raw[first_nl + 1:]
        body = body.rstrip("\r\n")
        if body.endswith(marker):
            body = body[: -len(marker)]
        body = body.rstrip(" \t")  # indentation before the closing marker
        lines = body.split("\n")
        if trim:
            indents = [len(x) - len(x.lstrip(" \t")) for x in lines if x.strip()]
            cut = min(indents) if indents else 0
            lines = [x[cut:] for x in lines]
            body = "\n".join(lines)
            col_base = 1 + cut
        else:
            col_base = 1
        return parse_template(body, line + 1, col_base, heredoc=True, origin=(line, col))

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


@dataclass(slots=True)
class _Directive:
    kind: str                   # if | else | endif | for | endfor
    strip_left: bool
    strip_right: bool
    line: int
    column: int
    expr: Any = None
    names: list = field(default_factory=list)


def _apply_strips(parts: list) -> list:
    """``%{~ ... ~}`` trims whitespace of the neighbouring literal text."""
    out = list(parts)
    for i, p in enumerate(out):
        if isinstance(p, _Directive):
            if p.strip_left and i > 0 and isinstance(out[i - 1], str):
                out[i - 1] = out[i - 1].rstrip()
            if p.strip_right and i + 1 < len(out) and isinstance(out[i + 1], str):
                out[i + 1] = out[i + 1].lstrip()
    return out


def _nest_directives(parts: list, line: int, col: int) -> list:
    """Turn the flat if/else/endif and for/endfor markers into nodes."""
    parts = _apply_strips(parts)
    root: list = []
    stack: list[tuple[Any, list]] = []   # (node, current list)
    current = root
    for p in parts:
        if not isinstance(p, _Directive):
            if not (isinstance(p, str) and p == ""):
                current.append(p)
            continue
        if p.kind == "if":
            node = TemplateIf(p.expr, [], [], p.line, p.column)
            current.append(node)
            stack.append((node, current))
            current = node.then
        elif p.kind == "else":
            if not stack or not isinstance(stack[-1][0], TemplateIf):
                raise HclSyntaxError("%{ else } without %{ if }", p.line, p.column)
            current = stack[-1][0].otherwise
        elif p.kind == "for":
            names = p.names
            key_var, value_var = (names[0], names[1]) if len(names) == 2 else (None, names[0] if names else "_")
            node = TemplateFor(key_var, value_var, p.expr, [], p.line, p.column)
            current.append(node)
            stack.append((node, current))
            current = node.body
        else:  # endif / endfor
            want = TemplateIf if p.kind == "endif" else TemplateFor
            if not stack or not isinstance(stack[-1][0], want):
                raise HclSyntaxError(f"%{{ {p.kind} }} without its opening directive", p.line, p.column)
            _, current = stack.pop()
    if stack:
        node = stack[-1][0]
        raise HclSyntaxError("template directive is not closed", node.line, node.column)
    return root


def _finish_template(parts: list, line: int, col: int, heredoc: bool) -> Expr:
    if any(isinstance(p, _Directive) for p in parts):
        parts = _nest_directives(parts, line, col)
    else:
        parts = [p for p in parts if not (isinstance(p, str) and p == "")]
    if all(isinstance(p, str) for p in parts):
        return Literal("".join(parts), line, col)
    # merge adjacent literal text
    merged: list = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        else:
            merged.append(p)
    return Template(merged, line, col, heredoc)


# ---------------------------------------------------------------------------
# Template text (heredoc bodies, JSON strings): split ${...} / %{...} ourselves
# ---------------------------------------------------------------------------

def _find_close(text: str, start: int) -> int:
    """Index of the ``}`` closing an interpolation whose body starts at
    ``start``; -1 when unclosed. Skips quoted strings and nested braces."""
    modes = ["code"]
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        mode = modes[-1]
        if mode == "code":
            if ch == "{":
                modes.append("code")
            elif ch == "}":
                modes.pop()
                if not modes:
                    return i
            elif ch == '"':
                modes.append("str")
            elif ch == "<" and text.startswith("<<", i):
                pass  # heredocs inside interpolations are not supported by HCL either
        else:  # in a string
            if ch == "\\":
                i += 1
            elif ch == '"':
                modes.pop()
            elif (ch == "$" or ch == "%") and text.startswith("{", i + 1):
                modes.append("code")
                i += 1
        i += 1
    return -1


def _line_col(text: str, offset: int, line: int, col: int) -> tuple[int, int]:
    before = text[:offset]
    nl = before.count("\n")
    if nl:
        return line + nl, offset - before.rfind("\n")
    return line, col + offset


_SIGIL = re.compile(r"\$\$\{|%%\{|\$\{|%\{")
_FOR_HEAD = re.compile(r"^\s*for\s+([A-Za-z_][\w-]*)\s*(?:,\s*([A-Za-z_][\w-]*)\s*)?in\s+(.*)$", re.S)


def parse_template(text: str, line: int = 1, column: int = 1, *, heredoc: bool = False,
                   origin: tuple[int, int] | None = None) -> Expr:
    """Parse template text (no surrounding quotes, no escapes other than
    ``$${`` / ``%%{``) into a Literal or Template."""
    parts: list = []
    buf: list[str] = []
    i = 0
    while True:
        m = _SIGIL.search(text, i)
        if m is None:
            buf.append(text[i:])
            break
        sigil = m.group(0)
        if len(sigil) == 3:  # $${ or %%{: escaped, literal ${ / %{
            buf.append(text[i:m.start()] + sigil[1:])
            i = m.end()
            continue
        buf.append(text[i:m.start()])
        sigil_at = m.start()
        j = m.end() - 1
        close = _find_close(text, j + 1)
        el, ec = _line_col(text, sigil_at, line, column)
        if close < 0:
            raise HclSyntaxError("unclosed template interpolation", el, ec)
        inner = text[j + 1:close]
        if buf:
            parts.append("".join(buf))
            buf = []
        il, ic = _line_col(text, j + 1, line, column)
        strip_left = inner.startswith("~")
        strip_right = inner.endswith("~")
        inner_clean = inner[1 if strip_left else 0: len(inner) - 1 if strip_right else len(inner)]
        if sigil[0] == "$":
            parts.append(_Directive("interp", strip_left, strip_right, el, ec,
                                    expr=parse_expression(inner_clean, il, ic + (1 if strip_left else 0))))
        else:
            parts.append(_template_directive(inner_clean, il, ic, strip_left, strip_right, el, ec))
        i = close + 1
    if buf:
        parts.append("".join(buf))
    # strip markers on interpolations, then unwrap them to plain expressions
    parts = _apply_strips(parts)
    parts = [p.expr if isinstance(p, _Directive) and p.kind == "interp" else p for p in parts]
    tl, tc = origin if origin else (line, column)
    return _finish_template(parts, tl, tc, heredoc)


def _template_directive(inner: str, line: int, col: int, sl: bool, sr: bool, el: int, ec: int) -> _Directive:
    word = inner.strip().split(None, 1)
    head = word[0] if word else ""
    if head == "if":
        offset = inner.index("if") + 2
        return _Directive("if", sl, sr, el, ec, expr=parse_expression(inner[offset:], line, col + offset))
    if head in ("else", "endif", "endfor"):
        return _Directive(head, sl, sr, el, ec)
    m = _FOR_HEAD.match(inner)
    if head == "for" and m:
        names = [m.group(1)] + ([m.group(2)] if m.group(2) else [])
        offset = m.start(3)
        return _Directive("for", sl, sr, el, ec, expr=parse_expression(m.group(3), line, col + offset),
                          names=names)
    raise HclSyntaxError("unknown template directive", el, ec)


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------

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


# A heredoc opener where an expression starts: "= <<EOT", "(<<-EOT", ", <<EOT".
_HEREDOC_OPEN = re.compile(r"[=(,\[:?]\s*<<-?([A-Za-z][A-Za-z0-9._-]*)[ \t]*\r?\n")


def check_heredocs_closed(text: str) -> None:
    """Refuse a heredoc that is never closed before the grammar sees it:
    the grammar's heredoc pattern backtracks quadratically over the rest of
    the file when the closing line is missing (200 kB of whitespace: 141 s;
    issue 16, item 15). Linear: one search per opener from where it opens.
    Openers on comment lines are not heredocs."""
    pos = 0
    while True:
        m = _HEREDOC_OPEN.search(text, pos)
        if m is None:
            return
        line_start = text.rfind("\n", 0, m.start()) + 1
        head = text[line_start:m.start()].lstrip()
        if head.startswith(("#", "//")):
            pos = m.end()
            continue
        close = re.compile(r"\n[^\S\n]*" + re.escape(m.group(1)) + r"(?![A-Za-z0-9._-])")
        found = close.search(text, m.end() - 1)
        if found is None:
            at = text.index("<<", m.start())
            line = text.count("\n", 0, at) + 1
            raise HclSyntaxError(f"heredoc <<{m.group(1)} is never closed (no line '{m.group(1)}' after it)",
                                 line, at - line_start + 1)
        _check_heredoc_blank_runs(text, m.end(), found.start(), m.group(1), line_start)
        pos = found.end()


# The grammar tries its closing pattern ("\n\s*MARK") at every line break of
# a heredoc body, and "\s*" runs over all the whitespace that follows: a run
# of k line breaks and n characters costs about k x n steps.
_BLANK_RUN = re.compile(r"[^\S\n]*\n\s*")
_MAX_BLANK_COST = 20_000_000


def _check_heredoc_blank_runs(text: str, start: int, end: int, mark: str, line_start: int) -> None:
    cost = 0
    for run in _BLANK_RUN.finditer(text, start, end):
        cost += run.group(0).count("\n") * (run.end() - run.start())
        if cost > _MAX_BLANK_COST:
            line = text.count("\n", 0, run.start()) + 1
            raise HclSyntaxError(f"heredoc <<{mark} holds {run.group(0).count(chr(10))} blank lines in a row "
                                 "(too slow to parse); not read", line, 1)


def parse_hcl(text: str, path: str) -> HclBody:
    """Parse a whole .tf / .tfvars file. Raises only HclSyntaxError."""
    check_heredocs_closed(text)
    try:
        tree = _parse_tree(text)
        body_tree = tree.children[0]
        result = HclBody(path, {}, [], 1, text.count("\n") + 1)
        _Converter().body(body_tree, result)
        return result
    except HclSyntaxError:
        raise
    except RecursionError:
        raise HclSyntaxError("nesting too deep", 1, 1) from None
    except Exception as exc:  # never let a converter bug escape as a crash
        raise HclSyntaxError(f"cannot read HCL ({type(exc).__name__})", 1, 1) from None


def parse_expression(text: str, line: int = 1, column: int = 1) -> Expr:
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


__all__ = [
    "HclSyntaxError", "HclBody", "Block", "Attribute", "parse_hcl", "parse_expression", "parse_template",
    "Literal", "Template", "TemplateIf", "TemplateFor", "Traversal", "GetAttr", "Index", "Splat",
    "FunctionCall", "TupleExpr", "ObjectExpr", "ObjectItem", "Conditional", "BinaryOp", "UnaryOp",
    "ForExpr", "Parenthesis", "Expr",
]


# Trees: pickled by their fields (parse cache, parse workers; see mlcost_lint.pickling).
def _pickle_by_fields() -> None:
    from mlcost_lint.pickling import pickled_by_fields

    for cls in (Literal, TemplateIf, TemplateFor, Template, GetAttr, Index, Splat, Traversal, FunctionCall,
                TupleExpr, ObjectItem, ObjectExpr, Conditional, BinaryOp, UnaryOp, ForExpr, Parenthesis,
                Attribute, Block, HclBody):
        pickled_by_fields(cls)


_pickle_by_fields()
