"""split_script against the character-at-a-time splitter it replaced (kept
here as the reference): the same tokens, lines, columns and ok flag on the
real Slurm scripts and container commands of ../shared and on generated
shell text."""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from mlcost_lint.link.shell import split_script

SHARED = Path(__file__).resolve().parents[3] / "shared"


def reference_split(text: str, starts: list[int] | None = None,
                 columns: list[int] | None = None) -> tuple[list[str | None], bool]:
    """Split a shell script into words; ``None`` marks a command boundary and
    the string "&" a background boundary. Returns (tokens, ok); ok is False
    when quotes are unbalanced (the words found so far are still returned).
    When ``starts`` is given, the 0-based line each token starts on is
    appended to it (one entry per token); ``columns`` likewise gets the
    0-based column each token starts at on its line."""
    tokens: list[str | None] = []
    word: list[str] = []
    in_word = False
    word_start = 0
    i, n = 0, len(text)
    newlines = [k for k, c in enumerate(text) if c == "\n"] if starts is not None else []

    def flush() -> None:
        nonlocal word, in_word
        if in_word:
            tokens.append("".join(word))
            if starts is not None:
                starts.append(bisect.bisect_left(newlines, word_start))
                if columns is not None:
                    columns.append(_column(word_start))
        word, in_word = [], False

    def _column(at: int) -> int:
        k = bisect.bisect_left(newlines, at)
        return at - (newlines[k - 1] + 1 if k else 0)

    def boundary(token: str | None) -> None:
        tokens.append(token)
        if starts is not None:
            starts.append(bisect.bisect_left(newlines, i))
            if columns is not None:
                columns.append(_column(i))

    while i < n:
        ch = text[i]
        if not in_word:
            word_start = i
        if ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":   # line continuation
                i += 2
                continue
            if i + 1 < n:
                word.append(text[i + 1])
                in_word = True
                i += 2
                continue
            i += 1
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                word.append(text[i + 1:])
                in_word = True
                flush()
                return tokens, False
            word.append(text[i + 1:end])
            in_word = True
            i = end + 1
            continue
        if ch == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                    if text[j + 1] != "\n":
                        buf.append(text[j + 1])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            word.append("".join(buf))
            in_word = True
            if j >= n:
                flush()
                return tokens, False
            i = j + 1
            continue
        if ch == "$" and i + 1 < n and text[i + 1] in "({":
            # Keep $(...) / ${...} (nested) inside the current word.
            close = ")" if text[i + 1] == "(" else "}"
            opener = text[i + 1]
            depth, j = 0, i + 1
            while j < n:
                if text[j] == opener:
                    depth += 1
                elif text[j] == close:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            word.append(text[i:j + 1])
            in_word = True
            i = j + 1
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            end = n - 1 if end < 0 else end
            word.append(text[i:end + 1])
            in_word = True
            i = end + 1
            continue
        if ch == "#" and not in_word:
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in " \t\r":
            flush()
            i += 1
            continue
        if ch == "&" and ((i > 0 and text[i - 1] in "<>") or text[i + 1:i + 2] == ">"):
            word.append(ch)        # a redirection: 2>&1, &>log
            in_word = True
            i += 1
            continue
        if ch in "\n;|&()":
            flush()
            boundary("&" if ch == "&" and text[i:i + 2] != "&&" else None)
            i += 2 if text[i:i + 2] in ("&&", "||", ";;") else 1
            continue
        word.append(ch)
        in_word = True
        i += 1
    flush()
    return tokens, True


def _both(text: str):
    ours_starts: list[int] = []
    ours_cols: list[int] = []
    ref_starts: list[int] = []
    ref_cols: list[int] = []
    ours = split_script(text, ours_starts, ours_cols)
    ref = reference_split(text, ref_starts, ref_cols)
    return (ours, ours_starts, ours_cols, split_script(text)), (ref, ref_starts, ref_cols, reference_split(text))


_ALPHABET = "ab =\\'\"$`#(){}\t\r\n;|&<>-_/.:*0"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=80))
def test_same_as_reference_on_generated_text(text: str) -> None:
    ours, ref = _both(text)
    assert ours == ref


@pytest.mark.parametrize("text", [
    "python train.py --lr 1e-4 # a comment\nsrun a#b $x ${Y} $(nproc) `date` 2>&1 &>log &",
    "a\\\nb 'c d' \"e $f \\\" g\" h;i|j&&k||l;;m(n)o",
    "unbalanced 'quote", 'unbalanced "double', "trailing \\", "$", "#", "a$", "a$b#c",
])
def test_same_as_reference_on_edge_cases(text: str) -> None:
    ours, ref = _both(text)
    assert ours == ref
    assert ours[0][0] or text in ("#",)     # the splitter found words (or the comment only)


def _real_scripts() -> list[Path]:
    roots = [SHARED / "corpus", SHARED / "corpus-v2"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                  if p.is_file() and p.suffix in (".sh", ".sbatch", ".slurm", ".yaml", ".yml") and p.stat().st_size < 200_000)


def test_same_as_reference_on_real_files() -> None:
    files = _real_scripts()
    if not files:
        pytest.skip("../shared/corpus and corpus-v2 not beside this clone")
    compared = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        ours, ref = _both(text)
        assert ours == ref, path
        compared += len(ref[0][0])
    assert compared > 100_000     # words compared, across about 1,500 files
