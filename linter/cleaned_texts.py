"""Cleaned message texts from earlier runs: what redaction
(:func:`mlcost_lint.redact.text_cleaner`) made of each finding text, so a
run that missed the run cache (one file changed) does not clean again the
thousands of messages that did not change (0.3 s of a 2.3 s partially warm
run on bench/'s 2,000-file tree).

Cleaning depends on the text, the project's secret values and the
redaction code, nothing else: entries are kept per set of secret values
(a run with one secret more or less starts empty) under the cache salt,
which holds the code fingerprint of secrets.py, credentials.py and redact.py. A text
is looked up by its digest (the cache holds no message text that was not
cleaned). The entry is signed like every cache entry, and keeps only the
texts the last run used.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache

# "m" + hex: shard folders m0..mf, apart from parse entries, runs and the file index.
PREFIX = "m"


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CleanedTexts:
    def __init__(self, cache: "ParseCache", secrets: Iterable[str]) -> None:
        h = hashlib.sha256(b"cleaned-texts\0" + cache.salt)
        for value in sorted(secrets):
            h.update(b"\0" + value.encode("utf-8", "surrogatepass"))
        self.cache = cache
        self.key = PREFIX + h.hexdigest()[1:]
        loaded = cache.get(self.key)
        self.earlier: dict[bytes, str] = loaded if isinstance(loaded, dict) else {}
        self.used: dict[bytes, str] = {}     # this run's texts: what is saved

    def get(self, key: bytes) -> str | None:
        found = self.earlier.get(key)
        if isinstance(found, str):
            self.used[key] = found
            return found
        return None

    def add(self, key: bytes, cleaned: str) -> None:
        self.used[key] = cleaned

    def save(self) -> None:
        if self.used != self.earlier:
            self.cache.put(self.key, self.used)
