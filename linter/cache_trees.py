"""A .tf file's tree is kept in the parse cache apart from the file.

Most runs over a warm cache evaluate no Terraform root at all (every root
comes from the root cache, model/terraform/root_cache.py), yet loading every
.tf file's tree was 60% of loading the parse results (0.26 s of 0.42 s on
the 2,000-file bench repository) and 76 MB of memory. So a .tf parse result
is stored as two signed entries: the file with its outline
(parse.document.HclOutline: what the model reads before any root is
evaluated) and the tree under a key derived from the file's. A run loads a
tree only when a root module has to be evaluated (:class:`HclTrees`); a
tree entry that is gone or unreadable is parsed again from the file's bytes,
which the run holds anyway, so the answer is the same either way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from typing import TYPE_CHECKING, Any

from mlcost_lint.parse.document import TERRAFORM_KINDS, FileKind, ParsedFile

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache


def tree_key(key: str) -> str:
    """The cache key of the tree of the file cached under ``key``."""
    return hashlib.sha256(b"hcl-tree\0" + key.encode()).hexdigest()


def kept_apart(parsed: ParsedFile) -> bool:
    # A file whose secrets were not collected at parse time (.tfvars, or a
    # tree too deep for the walk) is read again by secrets.collect_hcl_secrets:
    # it stays whole.
    return parsed.kind is FileKind.TERRAFORM and parsed.hcl is not None and parsed.secrets is not None


def payloads(parsed: ParsedFile) -> tuple[bytes, bytes | None]:
    """(the file's entry, its tree's entry or None). Raises RecursionError
    for a tree too deep to pickle, as pickling the whole file would."""
    if not kept_apart(parsed):
        return pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL), None
    from mlcost_lint.parse.hcl import outline_of

    tree = pickle.dumps(parsed.hcl, protocol=pickle.HIGHEST_PROTOCOL)
    parsed.meaning = meaning_of(parsed, tree)
    light = dataclasses.replace(parsed, hcl=None, hcl_outline=outline_of(parsed.hcl))
    return pickle.dumps(light, protocol=pickle.HIGHEST_PROTOCOL), tree


def outline_payload(parsed: ParsedFile) -> bytes:
    """:func:`payloads`' file entry without the tree pickled or the meaning
    taken (a run without a cache compares no meaning): what a parse worker
    sends of a .tf file whose roots it evaluated (model/terraform/worker_roots.py)."""
    from mlcost_lint.parse.hcl import outline_of

    light = dataclasses.replace(parsed, hcl=None, hcl_outline=outline_of(parsed.hcl))
    return pickle.dumps(light, protocol=pickle.HIGHEST_PROTOCOL)


def meaning_of(parsed: ParsedFile, tree: bytes) -> str:
    """What the model and every rule read of a .tf file (its tree pickled as
    ``tree``: positions included, comments not; its errors and secret-looking
    values), hashed. Two contents with one meaning differ only where
    suppression reads (comments), which every run reads from the file as
    it is now. Equal bytes mean an equal tree; a tree pickled differently
    (shared objects) only costs a run that reads Terraform."""
    rest = pickle.dumps((parsed.kind.value, parsed.errors, sorted(parsed.secrets or ()), parsed.skipped_reason),
                        protocol=pickle.HIGHEST_PROTOCOL)
    return hashlib.sha256(b"meaning\0" + tree + b"\0" + rest).hexdigest()


def document_meaning(parsed: ParsedFile) -> str | None:
    """The meaning of a file parsed into documents or a Slurm script (YAML,
    JSON, shell), as :func:`meaning_of` is a .tf file's: its documents' data
    with their positions, literal blocks and first lines, and its script;
    not a document's last line, which counts the comments after its last
    node (only ``--fix`` reads it, to find the document holding a finding's
    line, and a finding is never on such a comment). None for a Terraform
    kind (the tree is :func:`meaning_of`'s) or a result too deep to pickle:
    compare the bytes. What the model reads of a file comes from these alone
    (model.build.read_file_model), so an edit of comments that moved no line
    changes nothing any rule sees. A value pickled differently for equal
    content (a set, whose order follows the process's string hashing) only
    costs a run that reads the file."""
    if parsed.kind in TERRAFORM_KINDS:
        return None
    documents = [(d.index, d.data, d.positions, d.start_line, d.blocks) for d in parsed.documents]
    try:
        tree = pickle.dumps((documents, parsed.slurm), protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return None
    return meaning_of(parsed, tree)


def write(sink: Any, key: str, entries: tuple[bytes, bytes | None]) -> None:
    """Put :func:`payloads` under ``key`` (and the tree under its own key)
    into ``sink``: the ParseCache, or a worker's CacheWriter."""
    file_payload, tree_payload = entries
    if tree_payload is not None:
        sink.put_payload(tree_key(key), tree_payload)
    sink.put_payload(key, file_payload)


def store(cache: "ParseCache", key: str, parsed: ParsedFile) -> None:
    try:
        entries = payloads(parsed)
    except RecursionError:
        return
    write(cache, key, entries)


def joined(file_payload: bytes, tree_payload: bytes | None) -> ParsedFile:
    """The parse result a worker sent as :func:`payloads`, whole again."""
    parsed = pickle.loads(file_payload)
    if tree_payload is not None:
        parsed.hcl = pickle.loads(tree_payload)
        parsed.hcl_outline = None
    return parsed


class HclTrees:
    """The trees of the .tf files this run has with their outline only (taken
    from the cache, or sent by a parse worker that evaluated their roots
    itself: model/terraform/worker_roots.py); model/terraform calls it (once
    per file) when a root module has to be evaluated. Without a cache (or a
    key), a tree is parsed again from the bytes."""

    def __init__(self, cache: "ParseCache | None", max_depth: int) -> None:
        self.cache = cache
        self.max_depth = max_depth
        # display path -> (file key, bytes or a function reading them, kind)
        self.files: dict[str, tuple[str | None, Any, FileKind]] = {}

    def add(self, parsed: ParsedFile, key: str | None, data: Any) -> None:
        self.files[parsed.path] = (key, data, parsed.kind)
        if self.cache is not None and key is not None:
            self.cache.keep(tree_key(key))    # in use by this run: pruned last

    def __call__(self, parsed: ParsedFile) -> Any:
        from mlcost_lint.parse.hcl import HclBody

        key, data, kind = self.files[parsed.path]
        tree = self.cache.get(tree_key(key)) if self.cache is not None and key is not None else None
        if isinstance(tree, HclBody):
            return tree
        if callable(data):      # a file the file index kept unread: read it now
            data = data()
        from mlcost_lint.parse import parse_bytes

        return parse_bytes(data, parsed.path, kind, max_depth=self.max_depth).hcl

    def load_now(self, parsed: ParsedFile, key: str, data: bytes) -> None:
        """For callers that build the model without a tree loader (parse_all)."""
        self.add(parsed, key, data)
        parsed.hcl, parsed.hcl_outline = self(parsed), None
