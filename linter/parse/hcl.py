"""HCL (Terraform .tf / .tfvars) to a located, picklable expression tree.

Interface (owned by the Terraform work; see mlcost_lint.model.terraform):

    parse_hcl(text: str, path: str) -> HclBody
    parse_expression(text: str, line: int = 1, column: int = 1) -> Expr
    parse_template(text: str, line: int = 1, column: int = 1) -> Expr
    HclSyntaxError(message, line, column)

A hand-written lexer and recursive-descent parser (hcl_lexer.py,
hcl_descent.py) build the small slotted dataclasses below directly;
python-hcl2's Lark parse converted to the same classes (hcl_reference.py)
is the reference they are tested against. Every node carries a 1-based ``line`` and
``column``. Heredocs and template directives are split here, so the
evaluator never sees raw template text.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from typing import TYPE_CHECKING, Any, Union

from mlcost_lint.lean_dataclass import dataclass

if TYPE_CHECKING:
    from mlcost_lint.parse.document import HclOutline


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
    """A whole file: top-level attributes (tfvars) and blocks (.tf). No end
    line: lines added after the last block (a comment) leave the tree, and
    so the file's meaning (cache_trees.meaning_of), as it was."""
    path: str
    attributes: dict = field(default_factory=dict)
    blocks: list = field(default_factory=list)
    line: int = 1


# ---------------------------------------------------------------------------
# Shared by both parsers: escapes, template directives
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


def _heredoc_expr(raw: str, trim: bool, line: int, col: int) -> Expr:
    """A heredoc token's text (``<<[-]MARK\\n`` body ``MARK\\n``) as a template."""
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


# The Lark path (hcl_reference.py) is the reference the differential tests
# compare against; _MLCOST_LINT_HCL_REFERENCE=1 selects it (tests only).
USE_REFERENCE = os.environ.get("_MLCOST_LINT_HCL_REFERENCE") == "1"
# Files where the recursive-descent parser failed internally (not a clean
# syntax error) and the reference parsed them instead.
FALLBACKS: list[str] = []


def parse_hcl(text: str, path: str) -> HclBody:
    """Parse a whole .tf / .tfvars file. Raises only HclSyntaxError."""
    check_heredocs_closed(text)
    if USE_REFERENCE:
        from .hcl_reference import parse_hcl_reference
        return parse_hcl_reference(text, path)
    from .hcl_descent import parse_hcl_descent
    try:
        return parse_hcl_descent(text, path)
    except HclSyntaxError:
        raise
    except Exception:  # a bug in the fast parser: the reference decides
        FALLBACKS.append(path)
        from .hcl_reference import parse_hcl_reference
        return parse_hcl_reference(text, path)


def parse_expression(text: str, line: int = 1, column: int = 1) -> Expr:
    """Parse one expression written at ``line``/``column`` of its file."""
    if USE_REFERENCE:
        from .hcl_reference import parse_expression_reference
        return parse_expression_reference(text, line, column)
    from .hcl_descent import parse_expression_descent
    try:
        return parse_expression_descent(text, line, column)
    except HclSyntaxError:
        raise
    except Exception:
        FALLBACKS.append("<expression>")
        from .hcl_reference import parse_expression_reference
        return parse_expression_reference(text, line, column)


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


def outline_of(body: "HclBody") -> "HclOutline":
    """The parts of a .tf tree the model reads before evaluating any root
    (parse.document.HclOutline): what model/terraform and
    secrets.collect_hcl_secrets take from the tree, read the same way."""
    from mlcost_lint.parse.document import HclOutline

    sources: list[str] = []
    sensitive: list[str] = []
    for blk in body.blocks:
        if blk.type == "module" and blk.labels:
            value = getattr(getattr(blk.attributes.get("source"), "expr", None), "value", None)
            if isinstance(value, str):
                sources.append(value)
        elif blk.type == "variable" and blk.labels:
            expr = getattr(blk.attributes.get("sensitive"), "expr", None)
            flag = expr.value if isinstance(expr, Literal) else (
                "".join(expr.parts) if isinstance(expr, Template) and all(isinstance(p, str) for p in expr.parts)
                else None)
            if flag is True:
                sensitive.append(str(blk.labels[0]))
    return HclOutline(tuple(sources), tuple(sensitive))
