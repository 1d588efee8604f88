"""YAML and JSON to located :class:`Document` objects.

YAML: PyYAML's composer (the C one when present) gives every node a start
mark; we turn the node graph into plain data and a position table ourselves,
so no constructor ever runs (no Python object tags, no custom constructors).
Anchors are converted once and shared, and the expanded size of the
document is bounded, so an alias bomb costs nothing to read and is refused.

JSON: values come from :func:`json.loads` (exact JSON semantics), positions
from the YAML composer over the same text (JSON is YAML flow syntax), with a
fall back to the document start when the composer disagrees.
"""

from __future__ import annotations

import json
import math
import operator
import re
from typing import Any

from mlcost_lint.yaml_lib import SAFE_LOADER, yaml

from mlcost_lint.parse.document import Document, KeyPath

_BaseLoader: Any = SAFE_LOADER     # the C composer where PyYAML has it (yaml_lib)

# Plain scalar (value, implicit) -> tag, for the process: see _Loader.resolve.
_TAGS: dict[tuple[str, tuple[bool, bool]], str] = {}
_TAGS_MAX = 50_000
_TAG_VALUE_MAX = 64
# (standard tag, scalar text) -> value, for the process: see _Converter._scalar_value.
_VALUES: dict[tuple[str, str], Any] = {}


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    # The composer (the C one too) calls these two Python methods around
    # every node, for path resolvers; none is ever added to this loader, so
    # they would return at once. Builtins that take the same arguments and
    # do nothing cost a C call instead (238,000 calls on the real corpus).
    # A builtin is no descriptor: the instance does not bind it.
    descend_resolver = operator.is_     # (parent, index)
    ascend_resolver = tuple             # ()

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        """PyYAML's tag resolution, remembered for short scalars: even the C
        composer asks this Python method for every node's tag, and for a
        plain scalar it tries the implicit resolvers' regexes in turn. Keys
        and small values repeat across a project's files (on the real
        corpus, 119,000 calls). No path resolver is ever added to this
        loader, so a scalar's tag depends on its text and style alone, and
        a collection's is the default one (BaseResolver.resolve's end)."""
        if kind is not yaml.ScalarNode:
            return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG
        if len(value) > _TAG_VALUE_MAX:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = _TAGS.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_TAGS) >= _TAGS_MAX:
                _TAGS.clear()
            _TAGS[key] = tag
        return tag

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SCALAR = yaml.ScalarNode
_SEQUENCE = yaml.SequenceNode
_SEQ_TAG = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG
_MAP_TAG = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
_UNSAFE_TAG_PREFIX = "tag:yaml.org,2002:python/"


class DocumentError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


# What YAML counts as a line break (PyYAML and libyaml alike).
_LINE_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# A literal block header: "|", "|2", "|-", "|+2", "|2-", then an optional comment.
_BLOCK_HEADER = re.compile(r"\|([1-9]?)[+-]?([1-9]?)\s*(?:#.*)?$")


class _Converter:
    """Node graph -> (data, positions), with depth and size bounds."""

    def __init__(self, path: str, max_depth: int, max_nodes: int, record: bool = True,
                 text: str = "") -> None:
        self.path = path
        self.text = text
        self._lines: list[str] | None = None
        self.blocks: dict[KeyPath, tuple[int, int]] = {}
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.record = record
        self.positions: dict[KeyPath, tuple[int, int]] = {}
        self.done: dict[int, Any] = {}       # id(node) -> converted value (anchors)
        self.sizes: dict[int, int] = {}      # id(node) -> expanded node count
        self.expanded = 0
        self._scalar = yaml.constructor.SafeConstructor()

    def _mark(self, node: yaml.Node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def _count(self, root: yaml.Node) -> int:
        """Expanded size of ``root`` (aliases counted every time they appear),
        memoised so a bomb is measured in linear time. Iterative, with the
        depth bound checked on the way down: a 10,000-level document never
        reaches Python's recursion limit here."""
        sizes = self.sizes
        stack: list[tuple[yaml.Node, int, bool]] = [(root, 0, False)]
        while stack:
            node, depth, children_done = stack.pop()
            key = id(node)
            if children_done:
                kids = _children(node)
                total = 1 + sum(sizes.get(id(k), 1) for k in kids)
                sizes[key] = min(total, self.max_nodes + 1)
                continue
            if key in sizes:
                continue
            if depth > self.max_depth:
                line, col = self._mark(node)
                raise DocumentError(f"nesting deeper than {self.max_depth} levels (max-nesting-depth)", line, col)
            sizes[key] = 1  # cycles (recursive anchors) count once
            kids = _children(node)
            if kids:
                stack.append((node, depth, True))
                stack.extend((k, depth + 1, False) for k in kids)
        return sizes[id(root)]

    def convert(self, node: yaml.Node, alias_free: bool = False) -> Any:
        """``alias_free``: the text has no alias and too few characters for
        max_nodes nodes (a node takes at least half a character), so the
        size walk can only fail on depth; it then runs only when converting
        fails, and raises what it would have raised first (the walk was a
        third of reading the real corpus's YAML)."""
        if not alias_free:
            self._check_size(node)
            return self._convert(node, (), 0)
        try:
            return self._convert_once(node, (), 0)
        except (DocumentError, RecursionError):
            self._check_size(node)
            raise

    def _refuse(self, node: yaml.Node, depth: int) -> None:
        """A node too deep or with an unsafe tag ends the document's reading."""
        if depth > self.max_depth:
            line, col = self._mark(node)
            raise DocumentError(f"nesting deeper than {self.max_depth} levels (max-nesting-depth)", line, col)
        tag = node.tag or ""
        if tag.startswith(_UNSAFE_TAG_PREFIX):
            line, col = self._mark(node)
            raise DocumentError(f"unsafe YAML tag '!!{tag[len('tag:yaml.org,2002:'):]}' refused", line, col)

    def _convert_once(self, node: yaml.Node, path: KeyPath, depth: int) -> Any:
        """:meth:`_convert` for a text with no alias: no node is reached
        twice, so nothing is remembered for reuse, and a string scalar child
        (most nodes) is read in place instead of by a call. Same values,
        positions, blocks and first error, in the same order."""
        self._refuse(node, depth)
        kind = node.__class__
        if kind is _SCALAR or isinstance(node, yaml.ScalarNode):
            return self._scalar_value(node)
        record = self.record
        positions = self.positions
        below = depth + 1
        # a child at `below` is too deep: every child takes the call, which raises
        inline = below <= self.max_depth
        if kind is _SEQUENCE or isinstance(node, yaml.SequenceNode):
            out_list: list[Any] = []
            append = out_list.append
            for i, item in enumerate(node.value):
                if record:
                    mark = item.start_mark
                    positions[path + (i,)] = (mark.line + 1, mark.column + 1)
                if inline and item.tag == _STR_TAG and item.__class__ is _SCALAR:
                    append(item.value)
                else:
                    append(self._convert_once(item, path + (i,), below))
            return out_list
        out: dict[Any, Any] = {}
        merges: list[Any] = []
        blocks = self.text and record
        for key_node, value_node in node.value:
            key_tag = key_node.tag
            if key_tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            if key_node.__class__ is not _SCALAR and not isinstance(key_node, yaml.ScalarNode):
                k = self._convert_once(key_node, path, below)
                if not _hashable(k):
                    k = str(k)
            elif key_tag == _STR_TAG:
                k = key_node.value
            else:
                k = self._scalar_value(key_node)
                if not _hashable(k):
                    k = str(k)
            key_path = path + (k,)
            if record:
                mark = key_node.start_mark
                positions[key_path] = (mark.line + 1, mark.column + 1)
            if inline and value_node.__class__ is _SCALAR and value_node.tag == _STR_TAG:
                if blocks and value_node.style == "|":
                    block = self._block_start(key_node, value_node)
                    if block is not None:
                        self.blocks[key_path] = block
                out[k] = value_node.value
                continue
            if blocks and isinstance(value_node, yaml.ScalarNode) and value_node.style == "|":
                block = self._block_start(key_node, value_node)
                if block is not None:
                    self.blocks[key_path] = block
            out[k] = self._convert_once(value_node, key_path, below)
        for merge_node in merges:  # YAML merge keys: explicit keys win
            sources = merge_node.value if isinstance(merge_node, yaml.SequenceNode) else [merge_node]
            for src in sources:
                value = self._convert_once(src, path, below)
                if isinstance(value, dict):
                    for k, v in value.items():
                        out.setdefault(k, v)
        return out

    def _check_size(self, node: yaml.Node) -> None:
        if self._count(node) > self.max_nodes:
            line, col = self._mark(node)
            raise DocumentError(
                f"document expands to more than {self.max_nodes} nodes through aliases; refused",
                line, col)

    def _convert(self, node: yaml.Node, path: KeyPath, depth: int) -> Any:
        self._refuse(node, depth)
        key = id(node)
        if key in self.done:
            # An alias: reuse the converted value; positions stay at the anchor.
            return self.done[key]
        if isinstance(node, yaml.ScalarNode):
            value = self._scalar_value(node)
            self.done[key] = value
            return value
        if isinstance(node, yaml.SequenceNode):
            out_list: list[Any] = []
            self.done[key] = out_list
            for i, item in enumerate(node.value):
                if self.record:
                    self.positions[path + (i,)] = self._mark(item)
                out_list.append(self._convert(item, path + (i,), depth + 1))
            return out_list
        out: dict[Any, Any] = {}
        self.done[key] = out
        merges: list[Any] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            k = self._convert(key_node, path, depth + 1) if not isinstance(key_node, yaml.ScalarNode) \
                else self._scalar_value(key_node)
            if not _hashable(k):
                k = str(k)
            if self.record:
                self.positions[path + (k,)] = self._mark(key_node)
                if isinstance(value_node, yaml.ScalarNode) and value_node.style == "|" and self.text:
                    block = self._block_start(key_node, value_node)
                    if block is not None:
                        self.blocks[path + (k,)] = block
            out[k] = self._convert(value_node, path + (k,), depth + 1)
        for merge_node in merges:  # YAML merge keys: explicit keys win
            sources = merge_node.value if isinstance(merge_node, yaml.SequenceNode) else [merge_node]
            for src in sources:
                value = self._convert(src, path, depth + 1)
                if isinstance(value, dict):
                    for k, v in value.items():
                        out.setdefault(k, v)
        return out

    def _block_start(self, key_node: yaml.Node, node: yaml.ScalarNode) -> tuple[int, int] | None:
        """(line, column) where a literal block's content starts: the line
        after its header, at the indentation the indicator gives (the key's
        mapping indentation + N for ``|N``) or, without one, the first
        non-empty line's."""
        if self._lines is None:
            self._lines = _LINE_BREAKS.split(self.text)
        lines = self._lines
        head = node.start_mark.line
        if head >= len(lines):
            return None
        m = _BLOCK_HEADER.search(lines[head], node.start_mark.column)
        if m is None:
            return None
        digit = m.group(1) or m.group(2)
        if digit:
            indent = key_node.start_mark.column + int(digit)
        else:
            indent = None
            for line in lines[head + 1:node.end_mark.line + 1]:
                if line.strip(" "):
                    indent = len(line) - len(line.lstrip(" "))
                    break
            if indent is None or indent <= key_node.start_mark.column:
                return None         # an empty block: the next line is the parent's
        return head + 2, indent + 1

    def _scalar_value(self, node: yaml.ScalarNode) -> Any:
        tag = node.tag or ""
        if tag == _STR_TAG:     # most scalars: what SafeConstructor makes of them is the text
            return node.value
        if tag.startswith("tag:yaml.org,2002:") and tag not in ("tag:yaml.org,2002:binary",):
            # what a standard tag makes of a scalar depends on its text alone:
            # remembered for short ones (`true`, `8`, `null` repeat everywhere)
            key = (tag, node.value)
            value = _VALUES.get(key, _VALUES)
            if value is not _VALUES:
                return value
            value = self._standard_value(node)
            if len(node.value) <= _TAG_VALUE_MAX:
                if len(_VALUES) >= _TAGS_MAX:
                    _VALUES.clear()
                _VALUES[key] = value
            return value
        return node.value  # custom tags (!Ref, !!binary): the text as written

    def _standard_value(self, node: yaml.ScalarNode) -> Any:
        try:
            value = self._scalar.construct_object(node)
        except Exception:
            return node.value
        if isinstance(value, float) and not math.isfinite(value):
            return node.value  # .nan / .inf stay as written
        if not isinstance(value, (str, int, float, bool, type(None))):
            return node.value  # timestamps and sets: keep the text
        return value


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _problem_position(exc: yaml.YAMLError) -> tuple[int, int]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return 1, 1
    return mark.line + 1, mark.column + 1


def _yaml_error_message(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    text = " ".join(p for p in (context, problem) if p) or str(exc).splitlines()[0]
    return f"YAML syntax error: {text}"


def parse_yaml(text: str, path: str, *, max_depth: int = 500, max_nodes: int = 2_000_000) -> list[Document]:
    """All documents of a YAML stream. Raises :class:`DocumentError`."""
    docs: list[Document] = []
    try:
        loader = _Loader(text)
    except yaml.YAMLError as exc:  # pragma: no cover - reader errors surface here
        line, col = _problem_position(exc)
        raise DocumentError(_yaml_error_message(exc), line, col) from None
    try:
        index = 0
        # No alias without an anchor (an alias to none is the composer's error): a
        # glob ("*.json") or a shell "&&" alone leaves the text alias-free
        alias_free = ("*" not in text or "&" not in text) and 2 * len(text) + 2 <= max_nodes
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            conv = _Converter(path, max_depth, max_nodes, text=text)
            try:
                data = conv.convert(node, alias_free)
            except RecursionError:
                line, col = node.start_mark.line + 1, node.start_mark.column + 1
                raise DocumentError("nesting too deep to read", line, col) from None
            docs.append(Document(
                path=path, index=index, data=data, positions=conv.positions,
                start_line=node.start_mark.line + 1, end_line=node.end_mark.line + 1, blocks=conv.blocks,
            ))
            index += 1
    except yaml.YAMLError as exc:
        line, col = _problem_position(exc)
        raise DocumentError(_yaml_error_message(exc), line, col) from None
    except RecursionError:
        raise DocumentError("nesting too deep to read") from None
    finally:
        loader.dispose()
    return docs


def _json_int(text: str) -> Any:
    """An integer over Python's 4,300-digit int() limit stays the text as
    written, as in YAML: unknown for that object, not a failed file."""
    return int(text) if len(text) <= 4000 else text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str, path: str, *, max_depth: int = 500, max_nodes: int = 2_000_000) -> Document:
    """A JSON file as one document. Raises :class:`DocumentError`."""
    depth = _json_depth(text)
    if depth > max_depth:
        raise DocumentError(f"nesting deeper than {max_depth} levels (max-nesting-depth)")
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"JSON syntax error: {exc.msg}", exc.lineno, exc.colno) from None
    except (ValueError, RecursionError) as exc:
        raise DocumentError(f"JSON error: {exc}") from None
    positions: dict[KeyPath, tuple[int, int]] = {}
    end_line = text.count("\n") + 1
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
        if node is not None:
            conv = _Converter(path, max_depth, max_nodes)
            conv.convert(node)
            positions = conv.positions
    except (yaml.YAMLError, DocumentError, RecursionError):
        positions = {}  # values are right; lines fall back to the document start
    return Document(path=path, index=0, data=data, positions=positions, start_line=1, end_line=end_line)


def _json_depth(text: str) -> int:
    """Maximum bracket depth, ignoring strings: a cheap guard before json.loads
    (whose C scanner recurses) sees a 10,000-level document."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
        elif ch in "]}":
            depth -= 1
    return best
