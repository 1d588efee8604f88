"""The run cache: a whole run's outcome, keyed by everything it read.

The parse cache saves parsing; a warm run over an unchanged tree still
evaluated Terraform, linked, ran every rule and redacted the messages
again (0.17 x a cold run on bench/'s 2,000 files). This cache keeps what
the reporters need from one run (findings after pricing, redaction and
suppression, the fixes of the kept findings, what each file was read as)
under one key made of:

- the tool version and a fingerprint of the whole package's code and data
  (rules, catalogues, the price table), so a change to any of them misses;
- every setting that can change a finding (the whole resolved config, the
  price file's content), the working folder, the paths linted and the
  files reported on (explicit files with project context);
- the parse-cache key of every discovered file (content, display path,
  kind) in discovery order, and what could not be read and why;
- the ``--var-file`` contents and ``--var`` values.

So a hit is exactly an unchanged input, and a change to any input is a
miss that runs every stage (the entry for the new state is then written).
Entries live in the parse cache's folder and share its safety: signed, read
without following links, bounded, loaded by the unpickler that resolves
only this package's plain data classes (no code can run from an entry).

Runs that need the model itself (``-v`` lists what each file was read as
and every workload; ``--fix``/``--diff`` edit files) do not read it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

# A light module of its own: the replay step (replay.py) needs it first.
from mlcost_lint.fingerprint import package_fingerprint

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache
    from mlcost_lint.config import Settings
    from mlcost_lint.parse.document import ParsedFile


@dataclass(slots=True)
class CachedRun:
    """What a lint run leaves for the reporters, without the model."""

    kept: list
    suppressed: list
    used: set
    used_selectors: dict
    files: list                    # ParsedFile without documents / HCL / script (suppressions, errors kept)
    secrets: frozenset
    fixes: list = field(default_factory=list)     # (index into kept, Fix)
    read_as: list = field(default_factory=list)   # model.read_as.ReadAs, every file


RUN_PREFIX = "r"

# Settings that never change a finding (where a value came from).
_NOT_IN_KEY = frozenset({"origins"})


def settings_fingerprint(settings: Settings) -> str:
    parts = []
    for f in dataclasses.fields(settings):
        if f.name not in _NOT_IN_KEY:
            parts.append(f"{f.name}={getattr(settings, f.name)!r}")
    if settings.prices_file is not None:
        try:
            parts.append(hashlib.sha256(Path(settings.prices_file).read_bytes()).hexdigest())
        except OSError as exc:
            parts.append(f"prices-file unreadable: {exc}")
    return "\n".join(parts)


def run_key(cache: ParseCache, *, paths: Iterable[str], settings_key: str, file_keys: Iterable[str],
            var_keys: Iterable[str], cli_vars: dict[str, str], cwd: str,
            report_paths: Iterable[str] | None = None) -> str:
    """``settings_key``: :func:`settings_fingerprint` of the run's settings.
    ``file_keys``: one string per discovered file, in discovery order (its
    parse-cache key, or what made it unreadable)."""
    h = hashlib.sha256()

    def add(text: str) -> None:
        h.update(text.encode("utf-8", "surrogatepass") + b"\0")

    add("run")
    add(cache.salt.decode("utf-8", "surrogatepass"))
    add(package_fingerprint())
    add(settings_key)
    add(cwd)
    add("all" if report_paths is None else "only\0" + "\0".join(sorted(report_paths)))
    for group in (list(paths), list(file_keys), list(var_keys), sorted(f"{k}={v}" for k, v in cli_vars.items())):
        add(str(len(group)))
        for item in group:
            add(item)
    # "r" + hex: run entries sit in shard folders r0..rf, apart from the
    # parse entries' 00..ff (same signing, bounds and pruning).
    return RUN_PREFIX + h.hexdigest()[1:]


def light(pf: ParsedFile) -> ParsedFile:
    """The file as suppression and counting see it: no parsed content."""
    return dataclasses.replace(pf, documents=[], hcl=None, slurm=None, secrets=None, hcl_outline=None,
                               model=None)


def load(cache: ParseCache, key: str) -> CachedRun | None:
    value = cache.get(key)
    return value if isinstance(value, CachedRun) else None


def store(cache: ParseCache, key: str, run: CachedRun) -> None:
    cache.put(key, run)


def fixes_by_id(kept: list, fixes: list) -> dict[int, Any]:
    return {id(kept[i]): fix for i, fix in fixes if 0 <= i < len(kept)}


def fix_list(kept: list, pairs: list) -> list:
    index = {id(f): i for i, f in enumerate(kept)}
    return [(index[id(f)], fix) for f, fix in pairs if id(f) in index]

