"""Evaluated Terraform root modules, cached by the content of what they read.

A warm run with one changed file used to evaluate every root module again
(about 1 s of a 3.6 s run on bench/'s 2,000 files, 100 roots). A root's
evaluation reads only: the files of its own directory and of every local
module directory it instantiates (or looks up and does not find), its
``terraform.tfvars`` / ``*.auto.tfvars``, the ``--var-file`` contents, the
``--var`` values, the settings and the tool's code. So its result (the
resources, provider configurations, module calls and diagnostics it adds to
the model, and the evaluation steps it spent) is kept under a key of
exactly those inputs.

Which module directories a root reads is known only after evaluating it,
so lookups take two steps, as ccache's manifests do: a *manifest* keyed by
the root's own inputs names the directories the last evaluation read; the
*entry* is keyed by the manifest key plus the content of those
directories. A changed child module changes the entry key (a miss, then a
new manifest); unchanged directories mean the evaluation would read the
same ones again, and give the same result.

The evaluation budget (``max-evaluation-steps``) is shared by all roots in
order: a cached root is used only when its recorded steps still fit in
what is left, and then charged them, so a run that would run out of steps
runs out at the same root as without the cache. Roots whose evaluation hit
the budget or the recursion limit are not stored.

Entries share the parse cache's safety: signed, read without following
links, bounded, and loaded by the unpickler that resolves only this
package's data classes.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Iterable

from mlcost_lint.lean_dataclass import dataclass

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache

# Entry keys: "t" + hex (shard folders t0..tf), manifests "m" + hex, apart
# from parse entries (00..ff) and run entries (r0..rf).
ENTRY_PREFIX = "t"
MANIFEST_PREFIX = "m"


@dataclass(slots=True)
class RootManifest:
    """The local module directories the root's last evaluation looked up."""

    dirs: tuple


@dataclass(slots=True)
class RootEvaluation:
    """What one root module's evaluation added to the TerraformModel, in order."""

    resources: list
    providers: list
    provider_keys: list        # Build.provider_locations entries of those providers
    module_calls: list
    diagnostics: list
    steps: int
    secrets: frozenset         # secrets.resource_secrets of every one of its resources


class RootCache:
    """Lookups and stores for one run. ``file_keys``: display path -> parse
    key of every scanned file (None when that file has no key: roots that
    read it are not cached). ``context``: everything else a root reads
    (settings, var files, --var values, the tool), as one string."""

    def __init__(self, cache: ParseCache, file_keys: dict[str, str | None], context: str) -> None:
        self.cache = cache
        self.file_keys = file_keys
        self.context = context
        self.dir_files: dict[str, list[str]] = {}   # module dir -> paths of its files (set by build_terraform)
        # .tf file -> its meaning (ParsedFile.meaning, set by build_terraform), which stands for its
        # key: an evaluation reads the tree, not the comments
        self.meanings: dict[str, str] = {}
        # module dir -> the local module dirs it calls (set by build_terraform; worker_roots reads it)
        self.called: dict[str, set[str]] = {}
        self.hits = 0
        self.misses = 0

    def _digest(self, prefix: str, parts: Iterable[str]) -> str | None:
        h = hashlib.sha256()
        h.update(self.cache.salt + b"\0" + self.context.encode("utf-8", "surrogatepass") + b"\0")
        for part in parts:
            if part is None:
                return None
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return prefix + h.hexdigest()[1:]

    def _dir_parts(self, d: str) -> list[str | None]:
        paths = self.dir_files.get(d)
        if paths is None:
            return [f"dir {d} absent"]
        return [f"dir {d} {len(paths)}"] + [f"meaning {self.meanings[p]}" if p in self.meanings
                                            else self.file_keys.get(p) for p in paths]

    def manifest_key(self, root: str, var_paths: list[str]) -> str | None:
        return self._digest(MANIFEST_PREFIX, ["root", root, *self._dir_parts(root), str(len(var_paths)),
                                              *(self.file_keys.get(p) for p in var_paths)])

    def entry_key(self, manifest_key: str, dirs: Iterable[str]) -> str | None:
        parts: list[str | None] = [manifest_key]
        for d in sorted(dirs):
            parts.extend(self._dir_parts(d))
        return self._digest(ENTRY_PREFIX, parts)

    def lookup(self, manifest_key: str | None) -> RootEvaluation | None:
        entry = self.fetch(manifest_key)
        if manifest_key is not None:
            if entry is None:
                self.misses += 1
            else:
                self.hits += 1
        return entry

    def fetch(self, manifest_key: str | None) -> RootEvaluation | None:
        """:meth:`lookup` without counting."""
        if manifest_key is None:
            return None
        manifest = self.cache.get(manifest_key)
        if not isinstance(manifest, RootManifest) or not all(isinstance(d, str) for d in manifest.dirs):
            return None
        key = self.entry_key(manifest_key, manifest.dirs)
        entry = self.cache.get(key) if key is not None else None
        return entry if isinstance(entry, RootEvaluation) else None

    def store(self, manifest_key: str | None, dirs: Iterable[str], evaluation: RootEvaluation,
              payload: bytes | None = None) -> None:
        """``payload``: ``evaluation`` already pickled (by a parse worker: worker_roots.py)."""
        if manifest_key is None:
            return
        dirs = tuple(sorted(set(dirs)))
        key = self.entry_key(manifest_key, dirs)
        if key is None:
            return
        if payload is not None:
            self.cache.put_payload(key, payload)
        else:
            self.cache.put(key, evaluation)
        self.cache.put(manifest_key, RootManifest(dirs))


__all__ = ["RootCache", "RootEvaluation", "RootManifest"]
