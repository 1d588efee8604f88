"""Texts embedded in files (ConfigMap data values holding training
configs), parsed once per content through the parse cache.

The files holding them come from the parse cache, but the embedded texts
were parsed again by every run that builds the model (594 texts, about a
tenth of the model stage on bench/'s 2,000 files). The parse of a text
depends only on the text, the display path its documents carry and the
parse settings (in the cache's salt), so it is cached under exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlcost_lint.parse.document import Document

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache


@dataclass(slots=True)
class EmbeddedParse:
    """``documents`` None: the text is not valid in that syntax (DocumentError)."""

    documents: list | None


def parse_text(text: str, path: str, as_json: bool) -> list[Document] | None:
    """The documents of ``text`` in JSON (one) or YAML, None when it is not valid."""
    from mlcost_lint.parse.yamljson import DocumentError, parse_json, parse_yaml

    try:
        return [parse_json(text, path)] if as_json else parse_yaml(text, path)
    except DocumentError:
        return None


class EmbeddedDocuments:
    """:func:`parse_text` through the parse cache."""

    def __init__(self, cache: ParseCache) -> None:
        self.cache = cache

    def __call__(self, text: str, path: str, as_json: bool) -> list[Document] | None:
        key = self.cache.key(text.encode("utf-8", "surrogatepass"), path, "embedded-json" if as_json else "embedded-yaml")
        hit = self.cache.get(key)
        if isinstance(hit, EmbeddedParse) and (hit.documents is None or all(
                isinstance(d, Document) for d in hit.documents)):
            return hit.documents
        documents = parse_text(text, path, as_json)
        self.cache.put(key, EmbeddedParse(documents))
        return documents


__all__ = ["EmbeddedDocuments", "EmbeddedParse", "parse_text"]
