"""Safe automatic fixes (``--fix``, ``--diff``) for YAML training configs.

A fix is data attached to a finding: :class:`Fix` holds :class:`YamlEdit`
values (set or add one key in one mapping). Rules stay free of formatting:
a registry keyed by rule code (``mlcost_lint.fix.training.FIXERS``) computes
the edit from the finding and the project model, and :func:`apply_fixes`
writes it with ruamel.yaml's round-trip mode, which keeps comments, key
order and quoting. Every rewritten file is checked before it is used: the
new text must parse to the old data plus the edits, and differ from the old
text in exactly the edited lines. A file that would change anywhere else is
left alone and reported.

Terraform and JSON files are never rewritten.
"""

from __future__ import annotations

import io
import re
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from mlcost_lint.lean_dataclass import dataclass

if TYPE_CHECKING:
    from mlcost_lint.model.project import Project
    from mlcost_lint.rule import Finding


@dataclass(frozen=True, slots=True)
class YamlEdit:
    """Set ``key`` to ``value`` in the mapping at ``mapping`` (a key path
    inside YAML document ``document`` of file ``path``). When the key is not
    there it is added after the first of ``after`` that is present, else at
    the end of the mapping."""

    path: str
    document: int
    mapping: tuple
    key: str
    value: Any
    after: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fix:
    code: str
    description: str            # what the fix does, e.g. "add save_total_limit: 3"
    edits: tuple[YamlEdit, ...]


@dataclass(slots=True)
class FixOutcome:
    # path -> (old text, new text) for every file that changes
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    applied: list[tuple["Finding", Fix]] = field(default_factory=list)
    # (path, reason) for files whose fixes were not applied
    refused: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class FixContext:
    """What a fixer reads besides its finding: the project, and indexes of
    it built once for all the findings of a run (:meth:`once`). A fixer
    that scanned the project per finding made ``fixes_for`` quadratic: 5.6 s
    of a 4-copy bench/ run, 0.2 s of one copy."""

    project: "Project"
    _built: dict = field(default_factory=dict)

    def once(self, build: Callable[["Project"], Any]) -> Any:
        """``build(project)``, computed on first use and kept for this context."""
        if build not in self._built:
            self._built[build] = build(self.project)
        return self._built[build]


def fixes_for(findings: list["Finding"], project: "Project") -> list[tuple["Finding", Fix]]:
    """The fix of each finding that has one (in finding order)."""
    from mlcost_lint.fix.training import FIXERS

    out = []
    context = FixContext(project)
    for finding in findings:
        fixer = FIXERS.get(finding.code)
        if fixer is None:
            continue
        try:
            fix = fixer(finding, context)
        except Exception:  # a fixer bug must never break linting
            fix = None
        if fix is not None:
            out.append((finding, fix))
    return out


# ------------------------------------------------------------- applying ---

# Indentation layouts tried in turn (mapping, sequence, offset) after the
# one guessed from the file; the verification picks the first that
# reproduces every untouched line.
_LAYOUTS = ((2, 2, 0), (2, 4, 2), (4, 4, 0), (4, 6, 2), (4, 4, 2), (3, 3, 0))


def _yaml(mapping: int, sequence: int, offset: int):
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16          # never re-wrap long lines
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _move_trailing_comment(mapping: Any, before: str, new_key: str) -> None:
    """ruamel keeps the comment lines between two keys on the first key; a
    key inserted after it would land below them, separated from the key
    they describe. Keep the end-of-line comment on ``before`` and give the
    following comment lines to the new key."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    item = mapping.ca.items.get(before)
    if not item or len(item) < 3 or item[2] is None:
        return
    token = item[2]
    value = token.value
    cut = value.find("\n")
    if cut < 0 or cut == len(value) - 1:
        return
    token.value = value[: cut + 1]
    mapping.ca.items[new_key] = [None, None, CommentToken("\n" + value[cut + 1:], CommentMark(0), None), None]


def _node(root: Any, key_path: tuple) -> Any:
    node = root
    for key in key_path:
        node = node[key]
    return node


def _edit_roundtrip(docs: list[Any], edit: YamlEdit) -> None:
    mapping = _node(docs[edit.document], edit.mapping)
    if edit.key in mapping:
        mapping[edit.key] = edit.value
        return
    keys = list(mapping.keys())
    anchor = next((k for k in edit.after if k in mapping), None)
    if anchor is None:
        anchor = keys[-1] if keys else None
    position = keys.index(anchor) + 1 if anchor is not None else 0
    mapping.insert(position, edit.key, edit.value)
    if anchor is not None:
        _move_trailing_comment(mapping, anchor, edit.key)


def _edit_plain(docs: list[Any], edit: YamlEdit) -> None:
    _node(docs[edit.document], edit.mapping)[edit.key] = edit.value


def _expected_line_changes(edits: list[YamlEdit], old_docs: list[Any]) -> tuple[int, int]:
    """(lines replaced, lines added) the edits should cause."""
    replaced = added = 0
    for e in edits:
        if e.key in _node(old_docs[e.document], e.mapping):
            replaced += 1
        else:
            added += 1
    return replaced, added


def _diff_counts(old: str, new: str) -> tuple[int, int, int]:
    """(old lines replaced, new lines inserted, old lines deleted)."""
    import difflib  # here: every run imports this package for its fixes, few compare texts

    replaced = inserted = deleted = 0
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            common = min(i2 - i1, j2 - j1)
            replaced += common
            inserted += (j2 - j1) - common
            deleted += (i2 - i1) - common
        elif tag == "insert":
            inserted += j2 - j1
        elif tag == "delete":
            deleted += i2 - i1
    return replaced, inserted, deleted


def rewrite(text: str, edits: list[YamlEdit]) -> tuple[str | None, str]:
    """The new text of a YAML file with ``edits`` applied, or (None, why)."""
    from mlcost_lint.yaml_lib import SAFE_LOADER
    from mlcost_lint.yaml_lib import yaml as pyyaml
    from ruamel.yaml.util import load_yaml_guess_indent

    try:
        old_docs = list(pyyaml.load_all(text, Loader=SAFE_LOADER))
    except pyyaml.YAMLError as exc:
        return None, f"cannot parse: {exc.__class__.__name__}"
    try:
        expected = list(pyyaml.load_all(text, Loader=SAFE_LOADER))
        for e in edits:
            _edit_plain(expected, e)
        want_replaced, want_added = _expected_line_changes(edits, old_docs)
    except (KeyError, IndexError, TypeError):
        return None, "the configuration changed since it was linted"
    layouts: list[tuple[int, int, int]] = []
    try:
        _, indent, block_seq_indent = load_yaml_guess_indent(text)
        if indent:
            layouts.append((indent, indent, block_seq_indent or 0))
    except Exception:
        pass
    layouts.extend(layout for layout in _LAYOUTS if layout not in layouts)
    candidates = []
    for layout in layouts:
        candidates.append(lambda layout=layout: _dump_roundtrip(text, edits, layout))
    # Last resort: ruamel's positions, with the edited lines written in place
    # (round-trip dumping re-spells `null`/`True` and reflows multi-line flow
    # collections in some real configs, which the checks below refuse).
    candidates.append(lambda: _edit_in_place(text, edits))
    for make in candidates:
        try:
            new = make()
        except Exception:
            continue
        if new is None:
            continue
        if text.endswith("\n") is False and new.endswith("\n"):
            new = new[:-1]
        try:
            parsed = list(pyyaml.load_all(new, Loader=SAFE_LOADER))
        except pyyaml.YAMLError:
            continue
        if parsed != expected:
            continue
        if _diff_counts(text, new) == (want_replaced, want_added, 0):
            return new, ""
    return None, "the YAML could not be rewritten without changing other lines"


def _dump_roundtrip(text: str, edits: list[YamlEdit], layout: tuple[int, int, int]) -> str:
    yaml = _yaml(*layout)
    docs = list(yaml.load_all(text))
    for e in edits:
        _edit_roundtrip(docs, e)
    out = io.StringIO()
    if len(docs) == 1:
        yaml.explicit_start = text.lstrip().startswith("---")
        yaml.dump(docs[0], out)
    else:
        yaml.dump_all(docs, out)
    return out.getvalue()


_SCALAR_TOKEN = re.compile(r"[^\s#,{}\[\]]+")


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _edit_in_place(text: str, edits: list[YamlEdit]) -> str | None:
    """Set a scalar where it is written, or add ``key: value`` on its own
    line after the anchor entry (before the next key and the comments that
    lead into it), at the mapping's indentation. None when an edit does not
    fit that shape (flow mappings, multi-line values, no following key)."""
    from ruamel.yaml import YAML

    docs = list(YAML(typ="rt").load_all(text))
    lines = text.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []
    for e in edits:
        mapping = _node(docs[e.document], e.mapping)
        if e.key in mapping:
            key_line, _, value_line, value_col = mapping.lc.data[e.key]
            if value_line != key_line:
                return None
            line = lines[value_line]
            match = _SCALAR_TOKEN.match(line, value_col)
            if match is None:
                return None
            lines[value_line] = line[: match.start()] + _plain(e.value) + line[match.end():]
            continue
        if mapping.fa.flow_style():
            return None
        keys = list(mapping.keys())
        anchor = next((k for k in e.after if k in mapping), None)
        if anchor is None or keys.index(anchor) + 1 >= len(keys):
            return None
        following = keys[keys.index(anchor) + 1]
        anchor_line, anchor_col = mapping.lc.data[anchor][0], mapping.lc.data[anchor][1]
        at = mapping.lc.data[following][0]
        if at <= anchor_line:
            return None
        while at - 1 > anchor_line and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
            at -= 1
        inserts.append((at, f"{' ' * anchor_col}{e.key}: {_plain(e.value)}\n"))
    for at, new_line in sorted(inserts, reverse=True):
        lines.insert(at, new_line)
    return "".join(lines)




def apply_fixes(fixes: list[tuple["Finding", Fix]], write: bool,
                read: Callable[[str], str] | None = None) -> FixOutcome:
    """Rewrite each file once with all its edits; write the result when
    ``write``. Duplicate edits (two findings, one key) are applied once."""
    read = read or (lambda p: Path(p).read_text(encoding="utf-8"))
    outcome = FixOutcome()
    by_path: dict[str, list[tuple["Finding", Fix]]] = {}
    for finding, fix in fixes:
        for edit in fix.edits:
            by_path.setdefault(edit.path, [])
        by_path[fix.edits[0].path].append((finding, fix))
    for path in sorted(by_path):
        items = by_path[path]
        edits: list[YamlEdit] = []
        for _, fix in items:
            for e in fix.edits:
                if all((e.document, e.mapping, e.key) != (x.document, x.mapping, x.key) for x in edits):
                    edits.append(e)
        try:
            text = read(path)
        except (OSError, UnicodeDecodeError) as exc:
            outcome.refused.append((path, f"cannot read: {getattr(exc, 'strerror', None) or exc}"))
            continue
        new, why = rewrite(text, edits)
        if new is None:
            outcome.refused.append((path, why))
            continue
        if new == text:
            continue
        if write:
            try:
                Path(path).write_text(new, encoding="utf-8")
            except OSError as exc:
                outcome.refused.append((path, f"cannot write: {exc.strerror or exc}"))
                continue
        outcome.changed[path] = (text, new)
        outcome.applied.extend(items)
    return outcome


def unified_diff(path: str, old: str, new: str, clean: Callable[[str], str] | None = None) -> str:
    """The diff of one file. ``clean`` (mlcost_lint.redact.text_cleaner)
    hides secrets and escapes control characters in every line shown,
    context lines included: they are the scanned file's text."""
    import difflib

    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{path}", tofile=f"b/{path}")
    if clean is None:
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return "".join(clean(line.rstrip("\r\n")) + "\n" for line in lines)
