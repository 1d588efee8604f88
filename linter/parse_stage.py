"""The parse stage of a lint run: every input read and keyed for the parse
cache (``_read_all``), taken from the cache where its content was parsed
before, else parsed, in worker processes when there is enough work
(``_parse_many``), with the model builder fed each file as it arrives
(``_ModelFeed``). Also the parse cache itself as a run opens it
(``_open_cache``), and ``parse_all``, the parse stage alone (bench/, the
CLI's explicit-file check). The rest of the run is pipeline.py's."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from mlcost_lint.config import Settings
from mlcost_lint.discover import STDIN_DISPLAY, SourceFile
from mlcost_lint.gc_pause import gc_paused
from mlcost_lint.gitignore import git_root
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.parse import parse_bytes, sniff_kind
from mlcost_lint.parse.document import TERRAFORM_KINDS, FileKind, ParsedFile, ParseError

if TYPE_CHECKING:
    from mlcost_lint.cache import CacheWriter, ParseCache
    from mlcost_lint.cache_trees import HclTrees
    from mlcost_lint.file_index import FileIndex
    from mlcost_lint.model.build import ProjectBuilder
    from mlcost_lint.model.terraform.worker_roots import GroupInputs
    from mlcost_lint.pipeline import LintOptions
    from mlcost_lint.probe_ahead import Probe


@dataclass(frozen=True, slots=True)
class StdinData:
    """Standard input as the CLI read it: the first bytes and the full size."""

    head: bytes
    size: int


# Below this much work a process pool costs more than it saves (start-up
# and importing the parsers in each worker).
_PARALLEL_MIN_FILES = 24
_PARALLEL_MIN_BYTES = 256 * 1024
# Processes at most, whatever LintOptions.jobs says (the CLI refuses more).
_MAX_JOBS = 256


@dataclass(slots=True)
class _ParseTask:
    index: int
    data: bytes | None      # None: could not be read (error already built)
    display: str
    kind: FileKind
    cache_key: str | None


def _too_large(display: str, kind: FileKind, size: int, max_bytes: int) -> ParsedFile:
    pf = ParsedFile(path=display, kind=kind)
    pf.errors.append(ParseError(display, 1, 1, (
        f"file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.1f} MB limit "
        "(max-file-size-mb); not parsed")))
    return pf


def _read(sf: SourceFile, max_bytes: int, options: LintOptions) -> tuple[bytes | None, FileKind, ParsedFile | None]:
    """The file's bytes, or a finished ParsedFile for files that cannot be read."""
    if sf.display == STDIN_DISPLAY and str(sf.path) == "-":
        stdin = options.stdin if options.stdin is not None else sys.stdin.buffer.read()
        data, size = (stdin.head, stdin.size) if isinstance(stdin, StdinData) else (stdin, len(stdin))
        kind = sniff_kind(data)
        if size > max_bytes:
            return None, kind, _too_large(sf.display, kind, size, max_bytes)
        return data, kind, None
    from mlcost_lint.safe_io import NotRegularFile, TooLarge, read_regular

    try:
        # Non-blocking and fstat-checked: a file swapped for a FIFO or device
        # after discovery must not hang the run (issue 16, item 7).
        return read_regular(sf.path, max_bytes, follow_links=sf.follow), sf.kind, None
    except TooLarge as exc:
        return None, sf.kind, _too_large(sf.display, sf.kind, exc.size, max_bytes)
    except NotRegularFile:
        pf = ParsedFile(path=sf.display, kind=sf.kind)
        pf.errors.append(ParseError(sf.display, 1, 1, "not a regular file (FIFO, device or socket); not read"))
        return None, sf.kind, pf
    except FileNotFoundError:
        return None, sf.kind, ParsedFile(path=sf.display, kind=sf.kind, skipped_reason="file vanished during the scan")
    except OSError as exc:
        pf = ParsedFile(path=sf.display, kind=sf.kind)
        pf.errors.append(ParseError(sf.display, 1, 1, f"cannot read file: {exc.strerror or exc}"))
        return None, sf.kind, pf


def _parse_file(data: bytes, display: str, kind: FileKind, max_depth: int, cached: bool,
                models: bool = True) -> ParsedFile:
    """Parse one file; when the result is ``cached``, also read what the
    file adds to the model on its own (model.build.read_file_model), so that
    the runs that find it in the cache do not read it again. Without a cache
    that is left to the parent (ProjectBuilder.add), which does it while the
    workers parse: on 2 CPUs the workers are the busier side (cold on the
    real corpus, 5 interleaved runs, reading it in the workers was 0.1-0.5 s
    slower), except for a Slurm script (below). A cached result other than
    Terraform gets its meaning here (cache_trees.document_meaning; a .tf
    file's is taken where its tree is pickled): a run with no cache has no
    index to compare it with.
    ``models`` False: a file parsed to learn its meaning only
    (slice_plan.SlicePlan._incremental) is cached without its model, which
    the run that models it reads then (ProjectBuilder.add)."""
    from mlcost_lint.cache_trees import document_meaning

    parsed = parse_bytes(data, display, kind, max_depth=max_depth)
    if not cached:
        if parsed.slurm is not None:
            # A Slurm script's model is one job, small to send, but reading
            # it splits the script into words (about 1 ms a script, kept with
            # the model: FileModel.splits): done here, in parallel, instead of
            # by the parent at the end of the run (cold on the real corpus,
            # 151 scripts, 30 interleaved pairs: 0.08 s less).
            read_model(parsed)
        return parsed
    parsed.meaning = document_meaning(parsed)
    # A Terraform file's model is empty (model.build.read_file_model: the
    # evaluation reads it) and nothing asks for it, so it is not read: that
    # would import every model reader into a run that parsed .tf files only.
    if models and kind not in TERRAFORM_KINDS:
        read_model(parsed)
    return parsed


def read_model(parsed: ParsedFile) -> None:
    """Read ``parsed``'s model (model.build.read_file_model) and keep it as
    ``parsed.model``; None when a reader recursed too deep (outside the
    readers' guard: left to ProjectBuilder.add, as before)."""
    from mlcost_lint.model.build import read_file_model

    errors = len(parsed.errors)
    try:
        read_file_model(parsed)
    except RecursionError:
        del parsed.errors[errors:]
        parsed.model = None


def _parse_chunk(tasks: list[tuple[bytes, str, FileKind, str | None]], max_depth: int,
                 writer: CacheWriter | None, models: bool = True,
                 groups: "tuple[GroupInputs, list[list[int]], int] | None" = None) -> Any:
    """Worker side: parse, pickle once, write the cache entries here (so the
    parent neither pickles nor writes), return the pickles (a .tf file's
    tree apart: cache_trees.py). A result too deep to pickle (``1 + 1 + ...``
    with hundreds of terms is a deep expression tree) is None: the parent
    parses that file itself, so the output is the same whatever ``--jobs``
    is (issue 16, item 10).
    ``groups``: the inputs and the files (positions in ``tasks``) of the
    Terraform groups whose roots this task evaluates (model/terraform/
    worker_roots.py), and how many of ``tasks`` to send: the rest are
    parsed for those evaluations only (another task sends them). Their .tf
    files are sent without their tree, and the result is (the pickles, each
    group's evaluations)."""
    from mlcost_lint import cache_trees

    evaluated = {n for members in groups[1] for n in members} if groups is not None else set()
    send = groups[2] if groups is not None else len(tasks)
    kept: dict[int, ParsedFile] = {}
    out: list[tuple[bytes, bytes | None] | None] = []
    for n, (data, display, kind, key) in enumerate(tasks):
        if n >= send:
            try:
                kept[n] = _parse_file(data, display, kind, max_depth, False, models)
            except RecursionError:
                pass
            continue
        try:
            parsed = _parse_file(data, display, kind, max_depth, writer is not None, models)
            if n in evaluated:
                kept[n] = parsed
                if cache_trees.kept_apart(parsed):
                    # the tree stays here (and goes to the cache): the parent gets the outline
                    if writer is None or key is None:
                        out.append((cache_trees.outline_payload(parsed), None))
                        continue
                    payloads = cache_trees.payloads(parsed)
                    cache_trees.write(writer, key, payloads)
                    out.append((payloads[0], None))
                    continue
            payloads = cache_trees.payloads(parsed)
        except RecursionError:
            out.append(None)
            continue
        if writer is not None and key is not None:
            cache_trees.write(writer, key, payloads)
        out.append(payloads)
    if groups is None:
        return out
    from mlcost_lint.model.terraform.worker_roots import evaluate_group

    inputs, members_of, _ = groups
    # a file the parent parses itself (None) is one this task must not evaluate without
    found = [evaluate_group([kept[n] for n in members], inputs)
             if all(n in kept and (n >= send or out[n] is not None) for n in members) else {}
             for members in members_of]
    return out, found


def _parse_many(tasks: list[_ParseTask], jobs: int, max_depth: int, cache: ParseCache | None = None,
                feed: "_ModelFeed | None" = None, models: bool = True) -> dict[int, ParsedFile]:
    """Parse ``tasks``, in worker processes when there is enough work.
    With ``feed``, each result is handed to it as it arrives, and the
    parent builds the model of what has arrived while the workers parse
    the rest (it parses nothing itself)."""
    from mlcost_lint import cache_trees, parse_chunks

    def parse_here(t: _ParseTask) -> ParsedFile:
        parsed = _parse_file(t.data or b"", t.display, t.kind, max_depth, cache is not None, models)
        if cache is not None and t.cache_key is not None:
            cache_trees.store(cache, t.cache_key, parsed)
        return parsed

    def take(t: _ParseTask, payload: tuple[bytes, bytes | None] | None) -> ParsedFile:
        """A worker's result for ``t`` (which the worker wrote to the cache)."""
        if payload is None:     # too deep to send: parsed here, as with --jobs 1
            return parse_here(t)
        if writer is not None and t.cache_key is not None:
            cache.writes += 1
        parsed = cache_trees.joined(*payload)
        if parsed.hcl is None and parsed.hcl_outline is not None and feed is not None:
            feed.tree_left_behind(parsed, t)    # its roots were evaluated in the worker
        return parsed

    total = sum(len(t.data or b"") for t in tasks)
    if jobs <= 1 or len(tasks) < _PARALLEL_MIN_FILES or total < _PARALLEL_MIN_BYTES:
        return {t.index: parse_here(t) for t in tasks}
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: workers inherit the imported parsers and the grammar (no
    # re-import per worker). Where it is missing (Windows, some macOS
    # setups) spawn works, only slower to start.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork":
        from mlcost_lint.model.build import preload_readers
        from mlcost_lint.parse import preload

        preload({t.kind for t in tasks})    # inherited by the workers, not imported by each
        preload_readers()
    if feed is not None:
        planned = parse_chunks.fed_chunks(tasks, jobs, feed)
    else:
        planned = [(chunk, None) for chunk in parse_chunks.chunks(tasks, jobs * parse_chunks.CHUNKS_PER_JOB)]
    writer = cache.writer() if cache is not None else None
    out = {}
    with ProcessPoolExecutor(max_workers=min(jobs, len(planned)),
                             mp_context=multiprocessing.get_context(method)) as pool:
        futures = [(chunk, groups, pool.submit(_parse_chunk, [(t.data or b"", t.display, t.kind, t.cache_key)
                                                              for t in chunk], max_depth, writer, models, groups))
                   for chunk, groups in planned]
        if feed is not None:
            from concurrent.futures import as_completed

            if feed.while_parsing is not None:
                feed.while_parsing()
            chunk_of = {future: (chunk, groups) for chunk, groups, future in futures}
            for future in as_completed(chunk_of):
                chunk, groups = chunk_of[future]
                payloads = future.result()
                if groups is not None:
                    payloads, found = payloads
                    feed.worker_roots_found(chunk, groups[1], found)
                for task, payload in zip(chunk, payloads):
                    out[task.index] = take(task, payload)
                    feed.landed(task.index, out[task.index])
            return out
        # The parent would only wait: it parses the chunks no worker has
        # started yet, smallest first, until the workers reach them. Those
        # results cross no process boundary (unpickling the workers' results
        # was 0.22 s of the parent's time in a cold run of the real corpus).
        # Cold on bench/'s 2,000 files, 3 runs each: 5.35-5.53 s -> 5.22-5.36 s,
        # peak 320-327 -> 313 MB; one worker fewer used less CPU but more wall.
        for chunk, _, future in reversed(futures):
            if not future.cancel():
                break
            for t in chunk:
                out[t.index] = parse_here(t)
        for chunk, _, future in futures:
            if future.cancelled():
                continue
            for task, payload in zip(chunk, future.result()):
                out[task.index] = take(task, payload)
    return out


def _open_cache(settings: Settings, options: LintOptions, max_bytes: int,
                scan_paths: list[str]) -> ParseCache | None:
    """The parse cache, or None with one line on stderr when it cannot be
    used safely (a link in the cache folder, a key inside the scanned tree)."""
    from mlcost_lint.cache import DEFAULT_DIR, CacheUnavailable, ParseCache
    from mlcost_lint.redact import escape_controls

    # Like ruff: beside the config file when there is one, else here.
    base = Path(settings.root) if settings.source else Path()
    roots = {Path(settings.root)} | {Path(p) for p in scan_paths if p != "-"}
    roots |= {git for git in (git_root(p, any_entry=True) for p in roots) if git is not None}
    try:
        return ParseCache(options.cache_dir or base / DEFAULT_DIR,
                          f"depth={settings.max_nesting_depth}|size={max_bytes}", scan_roots=roots,
                          base=base, max_entry_bytes=16 * max_bytes + (1 << 20))
    except CacheUnavailable as exc:
        sys.stderr.write(f"mlcost-lint: running without the parse cache: {escape_controls(str(exc))}\n")
        return None


@dataclass(slots=True)
class _Input:
    """One discovered file as read: its bytes and parse-cache key, or the
    finished ParsedFile of a file that could not be read."""

    source: SourceFile
    data: bytes | None
    kind: FileKind
    key: str | None = None
    done: ParsedFile | None = None
    # Not read: the file index (mlcost_lint.file_index) gave its key; the
    # bytes are read only if something has to be parsed.
    unread: bool = False

    def run_key_part(self) -> str:
        if self.key is not None:
            return self.key
        if self.done is not None:
            errors = "|".join(f"{e.line}:{e.column}:{e.message}" for e in self.done.errors)
            return f"{self.source.display}\0{self.kind.value}\0{self.done.skipped_reason}\0{errors}"
        return f"{self.source.display}\0{self.kind.value}\0uncached"


def _read_all(files: list[SourceFile], max_bytes: int, options: LintOptions,
              cache: ParseCache | None, index: "FileIndex | None" = None,
              probes: "list[Probe | None] | None" = None) -> list[_Input]:
    """Read and key every file; with ``index``, a file whose stat is as the
    index recorded keeps its key unread. ``probes``: each file's stat when
    it was taken ahead (mlcost_lint.probe_ahead), else it is taken here."""
    from mlcost_lint.probe_ahead import probe

    if index is not None and probes is None:
        probes = [None if sf.display == STDIN_DISPLAY else probe(sf.path, sf.follow) for sf in files]
    out = []
    known = index.known_keys(files, probes, max_bytes) if index is not None else None
    for n, sf in enumerate(files):
        found = None
        if known is not None and sf.display != STDIN_DISPLAY:
            key = known[n]
            if key is not None:
                out.append(_Input(sf, None, sf.kind, key, unread=True))
                continue
            found = probes[n]
        data, kind, done = _read(sf, max_bytes, options)
        key = None
        if done is None and cache is not None and sf.display != STDIN_DISPLAY:
            key = cache.key(data, sf.display, kind.value)
            if index is not None:
                index.record(sf.display, found, kind.value, key)
        out.append(_Input(sf, data, kind, key, done))
    return out


def _read_now(item: _Input, max_bytes: int, options: LintOptions, cache: ParseCache) -> _Input:
    """An unread input read after all, as _read_all would have read it (its
    content may have changed since the index recorded it: then so has its key)."""
    data, kind, done = _read(item.source, max_bytes, options)
    key = cache.key(data, item.source.display, kind.value) if done is None else None
    return _Input(item.source, data, kind, key, done)


class _ModelFeed:
    """Hands parsed files to a model.build.ProjectBuilder in the order its
    calls need, as the files arrive from the parse workers: Terraform once
    every file it may read has arrived, then each file in input order. The
    parent so evaluates Terraform and models the first files while the
    workers parse the rest: cold on the real corpus (2,366 files, 2 CPUs),
    the model stage had run alone on one CPU after the parse."""

    def __init__(self, builder: "ProjectBuilder", kinds: list[FileKind], results: dict[int, ParsedFile],
                 while_parsing: "Callable[[], None] | None" = None):
        from mlcost_lint.model.build import TERRAFORM_CANDIDATES

        self._builder = builder
        self.while_parsing = while_parsing
        self._candidates = TERRAFORM_CANDIDATES
        self._results = results
        self._size = len(kinds)
        self._terraform_waits = {i for i, kind in enumerate(kinds) if kind in TERRAFORM_CANDIDATES
                                 and i not in results}
        self._terraform_done = False
        self._all_in = False
        self._next = 0
        # every Terraform file is parsed now (none from the parse cache): the
        # workers may evaluate its roots (worker_roots.py)
        self._terraform_fresh = not any(
            kind in TERRAFORM_KINDS and i in results and not (results[i].errors or results[i].skipped_reason)
            for i, kind in enumerate(kinds))

    def worker_inputs(self) -> "GroupInputs | None":
        """What a worker that evaluates Terraform roots reads besides the
        files, when it may (a cold run that models the whole project)."""
        builder = self._builder
        if not self._terraform_fresh or builder.terraform_summary is not None:
            return None
        from mlcost_lint.model.terraform.worker_roots import GroupInputs

        return GroupInputs(builder.settings.max_evaluation_steps, builder.var_files, builder.cli_vars)

    def use_worker_roots(self) -> None:
        self._builder.use_worker_roots()

    def worker_roots_found(self, chunk: list[_ParseTask], members_of: list[list[int]], found: list[dict]) -> None:
        """A worker's evaluations of the groups in ``chunk`` (before its files land)."""
        from mlcost_lint.model.terraform import dir_of

        for members, evaluations in zip(members_of, found):
            self._builder.worker_roots.add(frozenset(dir_of(chunk[k].display) for k in members), evaluations)

    def tree_left_behind(self, parsed: ParsedFile, task: _ParseTask) -> None:
        """A .tf file that came without its tree: loaded if the parent evaluates a root after all."""
        self._builder.hcl_trees.add(parsed, task.cache_key, task.data)

    def order(self, tasks: list[_ParseTask]) -> list[_ParseTask]:
        """What the workers should parse first: what Terraform waits for."""
        return sorted(tasks, key=lambda t: (t.kind not in self._candidates, t.index))

    def landed(self, index: int, parsed: ParsedFile) -> None:
        self._results[index] = parsed
        self._terraform_waits.discard(index)
        self.pump()

    def all_landed(self) -> None:
        """Every file is in (cache hits, one process, or the workers done)."""
        self._terraform_waits.clear()
        self._all_in = True
        self.pump()

    def pump(self) -> None:
        if not self._terraform_done:
            if self._terraform_waits:
                return
            candidates = [pf for i in range(self._size) if (pf := self._results.get(i)) is not None
                          and pf.kind in self._candidates]
            # Roots forked workers may evaluate (a run after a change) wait
            # until the parse workers are done: never a fork beside their pool.
            if not self._all_in and self._builder.may_fork_for_terraform(candidates):
                return
            self._terraform_done = True
            self._builder.terraform(candidates)
        while self._next < self._size and self._next in self._results:
            self._builder.add(self._results[self._next])
            self._next += 1


def _parse_inputs(inputs: list[_Input], settings: Settings, options: LintOptions,
                  cache: ParseCache | None, trees: "HclTrees | None" = None,
                  builder: "ProjectBuilder | None" = None,
                  while_parsing: "Callable[[], None] | None" = None, models: bool = True) -> list[ParsedFile]:
    """``trees``: where a cached .tf file's tree is loaded from when a root
    module needs it (cache_trees.py); without it, trees are loaded now.
    ``builder``: given every parsed file (ProjectBuilder.terraform and
    .add), while the rest are parsed when there are parse workers.
    ``while_parsing`` (with ``builder``): called once the workers have
    their work, before the first result is taken (later_stages.py).
    ``models`` False: the files parsed now are cached without their model
    (_parse_file); a file taken from the cache keeps the one it has."""
    with gc_paused():
        results: dict[int, ParsedFile] = {}
        todo: list[_ParseTask] = []
        # what becomes of a cached .tf file's tree (cache_trees.py): loaded when a root needs it, or now
        if trees is not None:
            take_tree = trees.add
        elif cache is not None:
            from mlcost_lint.cache_trees import HclTrees

            take_tree = HclTrees(cache, settings.max_nesting_depth).load_now
        max_bytes = int(settings.max_file_size_mb * 1_000_000)
        for i, item in enumerate(inputs):
            if item.done is not None:
                results[i] = item.done
                continue
            if cache is not None and item.key is not None:
                hit = cache.get(item.key)
                if isinstance(hit, ParsedFile):
                    if hit.hcl_outline is not None and hit.hcl is None:
                        # the bytes are only needed if the tree's own entry is gone
                        take_tree(hit, item.key, item.data if not item.unread else
                                  _reader(item.source, max_bytes, options))
                    results[i] = hit
                    continue
            if item.unread and cache is not None:
                item = inputs[i] = _read_now(item, max_bytes, options, cache)
                if item.done is not None:
                    results[i] = item.done
                    continue
                hit = cache.get(item.key) if item.key is not None else None
                if isinstance(hit, ParsedFile):
                    if hit.hcl_outline is not None and hit.hcl is None:
                        take_tree(hit, item.key, item.data)
                    results[i] = hit
                    continue
            todo.append(_ParseTask(i, item.data, item.source.display, item.kind, item.key))
        jobs = parse_jobs(options)
        feed = _ModelFeed(builder, [item.kind for item in inputs], results, while_parsing) \
            if builder is not None else None
        results.update(_parse_many(todo, jobs, settings.max_nesting_depth, cache, feed, models))
        if feed is not None:
            feed.all_landed()   # what arrived at once (cache hits, one process)
    return [results[i] for i in range(len(inputs))]


def parse_jobs(options: "LintOptions") -> int:
    """Processes a run may use (--jobs, default the CPU count)."""
    return min(options.jobs or os.cpu_count() or 1, _MAX_JOBS)


def _reader(sf: SourceFile, max_bytes: int, options: LintOptions):
    def read() -> bytes:
        return _read(sf, max_bytes, options)[0] or b""
    return read


def parse_all(files: list[SourceFile], settings: Settings, options: LintOptions,
              scan_paths: list[str] = ()) -> list[ParsedFile]:
    """Parse every file, from the cache where its content was parsed before,
    in worker processes when there is enough work. Order is the input order."""
    max_bytes = int(settings.max_file_size_mb * 1_000_000)
    cache = _open_cache(settings, options, max_bytes, scan_paths) if options.use_cache else None
    parsed = _parse_inputs(_read_all(files, max_bytes, options, cache), settings, options, cache)
    if cache is not None:
        cache.prune()
        cache.close()
    return parsed
