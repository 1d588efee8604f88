"""The parse stage: one file's bytes to a :class:`ParsedFile`.

Never raises for bad input: a file that is ours and cannot be read becomes a
:class:`ParseError` (reported as MLC001); a file that is not ours is skipped.
"""

from __future__ import annotations

import re
from typing import Iterable

from mlcost_lint.parse.document import FileKind, ParsedFile, ParseError
from mlcost_lint.parse.suppressions import scan

# Text that shows a YAML/JSON file is ours even when it does not parse
# (rules.md, Settled questions: MLC001 for YAML/JSON).
# A key starts a line, or follows "{" / "," (JSON and YAML flow style, often on one line).
_K8S_HINT = re.compile(r"(?:^|[{,])\s*[\"']?apiVersion[\"']?\s*:", re.M)
_KIND_HINT = re.compile(r"(?:^|[{,])\s*[\"']?kind[\"']?\s*:", re.M)
_TRAINING_HINT = re.compile(
    r"(?m)(?:^|[{,])\s*[\"']?(per_device_train_batch_size|gradient_accumulation_steps|learning_rate|"
    r"num_train_epochs|save_strategy|save_total_limit|base_model|model_name_or_path|"
    r"zero_optimization|train_micro_batch_size_per_gpu|train_batch_size|distributed_type|"
    r"mixed_precision|_component_|exp_manager|micro_batch_size|output_dir)[\"']?\s*:"
)
_TEMPLATE_SYNTAX = re.compile(r"\{\{.*?\}\}|\{%-?.*?-?%\}", re.S)


def looks_ours(text: str) -> bool:
    return bool((_K8S_HINT.search(text) and _KIND_HINT.search(text)) or _TRAINING_HINT.search(text))


def decode(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) or (None, error message). UTF-8 with or without a BOM;
    UTF-16 when it carries a BOM. NUL bytes mean binary."""
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError as exc:
            return None, f"not valid UTF-16 at byte {exc.start}"
    if b"\x00" in data:
        nul = data.index(b"\x00")
        return None, f"binary content (NUL byte at offset {nul})"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 at byte {exc.start}"


def _line_col_of_offset(data: bytes, offset: int) -> tuple[int, int]:
    before = data[:offset]
    line = before.count(b"\n") + 1
    col = offset - (before.rfind(b"\n") + 1) + 1
    return line, col


# The modules parse_bytes imports on first use, by kind (any other kind is
# read as JSON), and those every file goes through (decoding, secrets).
_HCL = ("mlcost_lint.parse.hcl", "mlcost_lint.parse.hcl_descent", "mlcost_lint.parse.hcl_lexer")
_READERS = {
    FileKind.TERRAFORM: _HCL,
    FileKind.TERRAFORM_VARS: _HCL,
    FileKind.SLURM: ("mlcost_lint.parse.slurm",),
    FileKind.SHELL: ("mlcost_lint.parse.slurm",),
}
_JSON_OR_YAML = ("mlcost_lint.parse.yamljson",)
_EVERY_FILE = ("encodings.utf_8_sig", "mlcost_lint.secrets", "mlcost_lint.credentials")


def preload(kinds: Iterable[FileKind]) -> None:
    """Import what parsing files of ``kinds`` needs, now: called before
    parse workers are forked, so that each inherits the modules instead of
    importing them again (about 60 ms of each worker's time on the real
    corpus, most of it compiling the HCL lexer's and PyYAML's patterns)."""
    import importlib

    names = set(_EVERY_FILE)
    for kind in kinds:
        names.update(_READERS.get(kind, _JSON_OR_YAML))
    for name in sorted(names):
        importlib.import_module(name)


def parse_bytes(data: bytes, path: str, kind: FileKind, *, max_depth: int = 500) -> ParsedFile:
    result = ParsedFile(path=path, kind=kind)
    text, problem = decode(data)
    if text is None:
        always_ours = kind in (FileKind.TERRAFORM, FileKind.TERRAFORM_VARS, FileKind.TERRAFORM_JSON)
        sample = data[:65536].decode("utf-8", "replace")
        always_ours = always_ours or kind is FileKind.SLURM
        if kind is FileKind.SHELL:
            result.skipped_reason = problem
        elif always_ours or looks_ours(sample):
            offset = 0
            m = re.search(r"byte (\d+)|offset (\d+)", problem or "")
            if m:
                offset = int(m.group(1) or m.group(2))
            line, col = _line_col_of_offset(data, offset)
            result.errors.append(ParseError(path, line, col, f"cannot read file: {problem}"))
        else:
            result.skipped_reason = problem
        return result
    result.suppressions, result.comment_lines = scan(text)
    if kind in (FileKind.TERRAFORM, FileKind.TERRAFORM_VARS) and not path.endswith(".json"):
        _parse_hcl(text, result, max_depth)
    elif kind in (FileKind.SLURM, FileKind.SHELL):
        _parse_slurm(text, result)
    elif kind is FileKind.YAML:
        _parse_yaml(text, result, max_depth)
    else:
        _parse_json(text, result, max_depth)
    if not path.endswith(".tfvars"):
        from mlcost_lint.secrets import file_secrets

        try:
            result.secrets = file_secrets(result)
        except RecursionError:   # left to collect_secrets, which walks the file as before
            result.secrets = None
    return result


# What hcl_nesting skips, in the order its scan meets them at one position:
# a quoted string (to its closing quote or the end of the line; a backslash
# escapes any character, a line break too), a # or // comment to the end of
# the line, a /* */ comment (to the end of the text when unclosed).
_HCL_NOT_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)
_HCL_BRACKETS = re.compile(r"[\[\](){}]")
_HCL_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def hcl_nesting(text: str, limit: int) -> tuple[int, int] | None:
    """The (line, column) where brackets first nest deeper than ``limit``,
    or None. Quoted strings and comments are skipped; heredoc bodies are not
    (their brackets only make the count larger, and real files sit far
    below the limit). Cheap and linear: checked before the recursive parser
    sees the text. The depth is found with regular expressions (C speed: the
    character loop below was 1.2 s of 7 MB of HCL, two thirds of the parse
    itself); only a file that does nest too deep is walked again for the
    position."""
    from itertools import accumulate

    brackets = _HCL_BRACKETS.findall(_HCL_NOT_BRACKETS.sub("", text))
    if max(accumulate(map(_HCL_STEP.__getitem__, brackets)), default=0) <= limit:
        return None
    return _hcl_nesting_position(text, limit)


def _hcl_nesting_position(text: str, limit: int) -> tuple[int, int] | None:
    depth = 0
    line, col = 1, 0
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
            in_string = False  # HCL strings do not span lines
        elif in_string:
            if ch == "\\":
                i += 1
                col += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "#" or (ch == "/" and text.startswith("//", i)):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            col = end - (text.rfind("\n", 0, end) + 1)
            i = end
            continue
        elif ch in "([{":
            depth += 1
            if depth > limit:
                return line, col
        elif ch in ")]}":
            depth -= 1
        i += 1
    return None


def _parse_hcl(text: str, result: ParsedFile, max_depth: int) -> None:
    from mlcost_lint.parse.hcl import HclSyntaxError, parse_hcl

    deep = hcl_nesting(text, max_depth)
    if deep is not None:
        result.errors.append(ParseError(result.path, deep[0], deep[1],
                                        f"nesting deeper than {max_depth} levels (max-nesting-depth)"))
        return
    try:
        result.hcl = parse_hcl(text, result.path)
    except HclSyntaxError as exc:
        result.errors.append(ParseError(result.path, exc.line, exc.column, exc.message))


def _parse_yaml(text: str, result: ParsedFile, max_depth: int) -> None:
    from mlcost_lint.parse.yamljson import DocumentError, parse_yaml

    try:
        result.documents = parse_yaml(text, result.path, max_depth=max_depth)
    except DocumentError as exc:
        if _TEMPLATE_SYNTAX.search(text):
            result.skipped_reason = "template syntax ({{ ... }}): render it first (helm template ... | mlcost-lint -)"
        elif looks_ours(text):
            result.errors.append(ParseError(result.path, exc.line, exc.column, exc.message))
        else:
            result.skipped_reason = "not YAML we read"


def _parse_slurm(text: str, result: ParsedFile) -> None:
    from mlcost_lint.parse.slurm import has_directives, read_slurm

    if not has_directives(text):
        result.skipped_reason = "no #SBATCH lines before the first command: not a Slurm batch script"
        return
    result.kind = FileKind.SLURM
    result.slurm = read_slurm(text)


def _parse_json(text: str, result: ParsedFile, max_depth: int) -> None:
    from mlcost_lint.parse.yamljson import DocumentError, parse_json

    try:
        result.documents = [parse_json(text, result.path, max_depth=max_depth)]
    except DocumentError as exc:
        if result.kind is FileKind.TERRAFORM_JSON or (
            not _TEMPLATE_SYNTAX.search(text) and (looks_ours(text) or '"resource"' in text)):
            result.errors.append(ParseError(result.path, exc.line, exc.column, exc.message))
        else:
            result.skipped_reason = "not JSON we read"


_HCL_SNIFF = re.compile(r'^\s*(resource|variable|provider|module|terraform|locals|data|output)\s+["{a-z]', re.M)


def sniff_kind(data: bytes) -> FileKind:
    """The kind of standard input, from its content."""
    head = data[:4096].lstrip().decode("utf-8", "replace")
    if head.startswith(("{", "[")):
        return FileKind.JSON
    if _HCL_SNIFF.search(head):
        return FileKind.TERRAFORM
    return FileKind.YAML
