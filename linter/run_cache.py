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
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

# A light module of its own: the replay step (replay.py) needs it first.
from mlcost_lint.fingerprint import package_fingerprint
from mlcost_lint.lean_dataclass import dataclass

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
    # ParsedFile without documents / HCL / script (suppressions, errors kept);
    # as stored, a file with nothing of that is (path, kind) alone (outcome_files)
    files: list
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
    """The file as suppression and counting see it: no parsed content
    (``pf`` itself when it has none: a file the last run's outcome gave)."""
    if not pf.documents and pf.hcl is None and pf.slurm is None and pf.secrets is None \
            and pf.hcl_outline is None and pf.model is None:
        return pf
    return dataclasses.replace(pf, documents=[], hcl=None, slurm=None, secrets=None, hcl_outline=None,
                               model=None)


def outcome_files(files: list[ParsedFile]) -> list:
    """``files`` as an outcome stores them: light, and a file with no
    suppression, error or skip reason as ``(path, kind)`` alone (its comment
    lines matter only to a suppression, its meaning only to the project
    index). Most files are such; whole ParsedFiles made the outcome of the
    real corpus 531 KB of 817, pickled and loaded again by every
    incremental run."""
    out: list = []
    for pf in files:
        if pf.suppressions or pf.errors or pf.skipped_reason is not None:
            out.append(light(pf))
        else:
            out.append((pf.path, pf.kind))
    return out


def _files_of(stored: list) -> list[ParsedFile] | None:
    """outcome_files' list as ParsedFiles; None when an item is neither."""
    from mlcost_lint.parse.document import FileKind, ParsedFile

    out = []
    for item in stored:
        if isinstance(item, ParsedFile):
            out.append(item)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) \
                and isinstance(item[1], FileKind):
            out.append(ParsedFile(item[0], item[1]))
        else:
            return None
    return out


def load(cache: ParseCache, key: str) -> CachedRun | None:
    value = cache.get(key)
    if not isinstance(value, CachedRun) or not isinstance(value.files, list):
        return None
    files = _files_of(value.files)
    if files is None:
        return None
    value.files = files
    return value


def store(cache: ParseCache, key: str, run: CachedRun) -> None:
    """``run`` with its files as outcome_files stores them (``run`` itself unchanged)."""
    cache.put(key, dataclasses.replace(run, files=outcome_files(run.files)))


def fixes_by_id(kept: list, fixes: list) -> dict[int, Any]:
    return {id(kept[i]): fix for i, fix in fixes if 0 <= i < len(kept)}


def fix_list(kept: list, pairs: list) -> list:
    index = {id(f): i for i, f in enumerate(kept)}
    return [(index[id(f)], fix) for f, fix in pairs if id(f) in index]

