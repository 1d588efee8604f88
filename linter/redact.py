"""What is printed never shows a secret or a control character: each text
from a scanned file (finding messages, addresses and related messages,
``full`` source lines, ``--diff`` lines) has the project's secret values
(found by :mod:`mlcost_lint.secrets`) and credential-shaped values
(:mod:`mlcost_lint.credentials`) replaced with ``***``, and control,
line-separator, bidi and invisible characters escaped
(:func:`escape_controls`).

:func:`redact_findings` runs after the rules, on every finding, so rules do
not need to be careful one by one.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable

from mlcost_lint.secrets import REDACTED, collect_secrets

# Characters a scanned file can put into a message (through an object name,
# a value) that would act on whatever displays it: line breaks start a new
# output line (in a CI log, a line "::error ..." is a GitHub Actions
# workflow command), ESC/BEL drive the terminal, bidi overrides reorder
# what a reviewer reads. They are shown escaped instead.
# Zero-width and other invisible format characters hide text from a
# reviewer; lone surrogates (from JSON escapes or non-UTF-8 file names read
# with surrogateescape) cannot even be encoded for output.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069"
                      "\ufeff\ufff9-\ufffb\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_controls(text: str) -> str:
    """``text`` with every control, line-separator and bidi character
    written as a visible escape (``\\n``, ``\\x1b``, ``\\u202e``)."""
    if not isinstance(text, str) or not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(0)) or (
        f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else f"\\u{ord(m.group(0)):04x}"), text)


class Redactor:
    """Replaces each secret value (longest first, so a secret holding another
    is hidden whole) in a text with ``***``. A value is replaced where it
    stands as a whole token, never inside a longer name: a secret
    ``abc123`` is hidden in ``user:abc123@host`` and ``job-abc123`` but not
    inside the word ``xabc123y`` (ordinary words of our own messages stay
    as they are)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        values = sorted({s for s in secrets if s})
        self._pattern = _secrets_pattern(values) if values else None

    def __call__(self, text: str) -> str:
        if self._pattern is None or not isinstance(text, str):
            return text
        return self._pattern.sub(REDACTED, text)


_TOKEN_CHAR = "A-Za-z0-9_"


def _secrets_pattern(values: list[str]) -> "re.Pattern[str]":
    """One regex for every secret value, as a trie: at each position only the
    branches of the next character are tried, so the cost does not grow with
    the number of secrets (an alternation of 1,243 values took 2 ms per
    message: 32 s of a 2,000-file run). Children come before a value that
    ends at a node, so the longest value wins; the whole-token guards of
    :func:`_whole_token` sit at the first character and at each end."""
    try:
        return re.compile(_trie(values))
    except (RecursionError, re.error, OverflowError):
        ordered = sorted(values, key=lambda v: (-len(v), v))
        return re.compile("|".join(_whole_token(v) for v in ordered))


def _trie(values: list[str]) -> str:
    root: dict = {}
    for value in values:
        node = root
        for ch in value:
            node = node.setdefault(ch, {})
        node[""] = {}

    def tail(ch: str) -> str:
        return f"(?![{_TOKEN_CHAR}])" if re.match(f"[{_TOKEN_CHAR}]", ch) else ""

    def below(node: dict, last: str) -> str:
        text = ""
        while len(node) == 1 and "" not in node:     # a chain: no group needed
            (ch, node), = node.items()
            text += re.escape(ch)
            last = ch
        alts = [re.escape(ch) + below(child, ch) for ch, child in sorted(node.items()) if ch]
        if "" in node:
            alts.append(tail(last))
        if len(alts) == 1:
            return text + alts[0]
        return text + "(?:" + "|".join(alts) + ")"

    heads = []
    for ch, child in sorted(root.items()):
        guard = f"(?<![{_TOKEN_CHAR}])" if re.match(f"[{_TOKEN_CHAR}]", ch) else ""
        heads.append(guard + re.escape(ch) + below(child, ch))
    return "|".join(heads)


def _whole_token(secret: str) -> str:
    head = f"(?<![{_TOKEN_CHAR}])" if re.match(f"[{_TOKEN_CHAR}]", secret[0]) else ""
    tail = f"(?![{_TOKEN_CHAR}])" if re.match(f"[{_TOKEN_CHAR}]", secret[-1]) else ""
    return head + re.escape(secret) + tail


def text_cleaner(secrets: Iterable[str], keep_tabs: bool = False, memo: Any = None) -> Any:
    """What every text from a scanned file goes through before it is shown
    (messages, ``full`` source lines, ``--diff`` lines): the project's
    secret values and credential-shaped values hidden, then control and
    invisible characters escaped (tabs kept for display when asked).
    ``memo``: a cleaned_texts.CleanedTexts for these secrets (texts cleaned
    by earlier runs, by digest)."""
    from mlcost_lint.credentials import mask_credentials

    redactor: list[Redactor] = []    # built at the first text no memo knows
    if keep_tabs:
        memo = None      # a memo holds texts cleaned without keep_tabs (redact_findings)
    # Messages repeat (related lines, addresses, one rule's text per object):
    # each distinct short text is cleaned once per cleaner.
    done: dict[str, str] = {}
    if memo is not None:
        from mlcost_lint.cleaned_texts import digest

    def clean(text: str) -> str:
        if not isinstance(text, str):
            return text
        cached = done.get(text)
        if cached is not None:
            return cached
        key = digest(text) if memo is not None else None
        out = memo.get(key) if key is not None else None
        if out is None:
            if not redactor:
                redactor.append(Redactor(secrets))
            hidden = mask_credentials(redactor[0](text))
            if keep_tabs:
                out = "\t".join(escape_controls(part) for part in hidden.split("\t"))
            else:
                out = escape_controls(hidden)
            if key is not None:
                memo.add(key, out)
        if len(text) <= _MEMO_CLEAN_MAX and len(done) < _MEMO_CLEAN_ENTRIES:
            done[text] = out
        return out

    return clean


_MEMO_CLEAN_MAX = 1024          # characters of one remembered text
_MEMO_CLEAN_ENTRIES = 100_000   # texts remembered by one cleaner


def redact_findings(findings: list, project: Any, memo_for: Any = None) -> frozenset[str]:
    """Hide every secret value of ``project`` from each finding's message,
    address and related messages, and escape control characters in them
    (in place); returns the secret values. ``memo_for(secrets)``: the
    cleaned_texts.CleanedTexts to take earlier runs' cleaned texts from."""
    secrets = frozenset(collect_secrets(project))
    if not findings:  # the secrets are still returned: reporters hide them from source lines
        return secrets
    memo = memo_for(secrets) if memo_for is not None else None
    clean = text_cleaner(secrets, memo=memo)
    for f in findings:
        f.message = clean(f.message)
        f.address = clean(f.address)
        if f.related:
            f.related = tuple(replace(r, message=clean(r.message)) for r in f.related)
    if memo is not None:
        memo.save()
    return secrets
