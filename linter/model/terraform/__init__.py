"""Terraform to the project model.

    build_terraform(files, settings, *, var_files=(), cli_vars=None) -> TerraformModel
    is_plan_json(data) -> bool

``files`` are parsed .tf / .tf.json / .tfvars files and plan JSON documents.
Files are grouped into modules by directory; every directory with
configuration that no other scanned module uses as a local ``source`` is a
root module and is evaluated with its ``terraform.tfvars`` and
``*.auto.tfvars`` (then ``var_files``, then ``cli_vars``).
"""

from __future__ import annotations

import posixpath
from typing import Any, Iterable

from mlcost_lint.model.cloud import TerraformModel
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.parse.hcl import outline_of


def is_plan_json(data: Any) -> bool:
    """True for `terraform show -json` output (a plan, or a state)."""
    if not isinstance(data, dict) or "format_version" not in data:
        return False
    if isinstance(data.get("planned_values"), dict) or "resource_changes" in data:
        return True
    return isinstance(data.get("values"), dict) and "terraform_version" in data


def dir_of(path: str) -> str:
    """A file's module directory."""
    d = posixpath.dirname(path.replace("\\", "/"))
    return posixpath.normpath(d) if d else "."


def _is_auto_vars(name: str) -> bool:
    return name in ("terraform.tfvars", "terraform.tfvars.json") or name.endswith(
        (".auto.tfvars", ".auto.tfvars.json"))


def build_terraform(files: list, settings: Any, *, var_files: Iterable = (),
                    cli_vars: dict[str, str] | None = None, root_cache: Any = None,
                    trees: Any = None, jobs: int = 1) -> TerraformModel:
    """``root_cache``: a :class:`root_cache.RootCache` to take unchanged
    root modules' evaluations from (and store the others in), or None.
    ``trees``: loads the tree of a .tf file that came from the parse cache
    with only its outline (ParsedFile.hcl_outline); called only when some
    root module has to be evaluated. ``jobs``: processes the roots the
    cache does not hold may be evaluated in (_Roots.prefetch)."""
    from mlcost_lint.model.terraform.budget import Budget
    from mlcost_lint.model.terraform.builder import Build
    from mlcost_lint.model.terraform.declarations import ModuleSource
    from mlcost_lint.model.terraform.plan import load_plan
    from mlcost_lint.model.terraform.tfjson import json_to_hcl
    from mlcost_lint.parse.document import FileKind

    model = TerraformModel()
    budget = Budget(getattr(settings, "max_evaluation_steps", 2_000_000))
    sources: dict[str, ModuleSource] = {}
    tfvars_by_dir: dict[str, list] = {}      # dir -> [(file name, body, path)]
    dir_files: dict[str, list[str]] = {}    # what each module directory's evaluation reads
    plans: list = []

    module_sources: dict[str, list[str]] = {}   # dir -> its module blocks' source strings
    for f in sorted(files, key=lambda f: f.path):
        kind = f.kind
        try:
            if kind is FileKind.TERRAFORM and (f.hcl is not None or f.hcl_outline is not None):
                # A file from the parse cache has only its outline: its tree is
                # read (``trees``) if a root is evaluated (_Roots._prepare).
                d = dir_of(f.path)
                sources.setdefault(d, ModuleSource(d)).pending.append(f.hcl if f.hcl is not None else f)
                outline = outline_of(f.hcl) if f.hcl is not None else f.hcl_outline
                module_sources.setdefault(d, []).extend(outline.module_sources)
                dir_files.setdefault(d, []).append(f.path)
            elif kind is FileKind.TERRAFORM_JSON and f.documents:
                d = dir_of(f.path)
                body = json_to_hcl(f.documents[0])
                sources.setdefault(d, ModuleSource(d)).pending.append(body)
                module_sources.setdefault(d, []).extend(outline_of(body).module_sources)
                dir_files.setdefault(d, []).append(f.path)
            elif kind is FileKind.TERRAFORM_VARS:
                name = posixpath.basename(f.path)
                if _is_auto_vars(name):
                    body = _vars_body(f)
                    if body is not None:
                        tfvars_by_dir.setdefault(dir_of(f.path), []).append((name, body, f.path))
            elif kind in (FileKind.TERRAFORM_PLAN, FileKind.JSON) and f.documents:
                doc = f.documents[0]
                if is_plan_json(doc.data):
                    plans.append(doc)
        except RecursionError:
            model.diagnostics.append((Location(f.path), "configuration nested too deeply to evaluate"))

    # Root modules: directories no scanned module calls as a local source.
    called: dict[str, set[str]] = {}
    for d, values in module_sources.items():
        for value in values:
            if value.startswith(("./", "../")):
                child = posixpath.normpath(posixpath.join(d, value))
                if child in sources and child != d:
                    called.setdefault(d, set()).add(child)
    children = set().union(*called.values()) if called else set()
    roots = [d for d in sorted(sources) if d not in children]
    reached = _reachable(roots, called)
    for d in sorted(sources):   # modules only reachable through a cycle: start somewhere
        if d not in reached:
            roots.append(d)
            reached |= _reachable([d], called)

    build = Build(sources, budget, model, {})
    extra_vars = [b for b in (_vars_body(f) for f in var_files) if b is not None]
    if root_cache is not None:
        root_cache.dir_files = dir_files
        root_cache.meanings = {f.path: f.meaning for f in files if f.kind is FileKind.TERRAFORM and f.meaning}
        root_cache.called = called
    run = _Roots(build, called, tfvars_by_dir, extra_vars, cli_vars or {}, root_cache, trees)
    if root_cache is not None and jobs > 1:
        run.prefetch(roots, jobs)
    for d in roots:
        run.root(d)
    run.finish()

    for doc in plans:
        load_plan(doc, model)
    mark_capacity_reservations(model.resources)
    return model


# Pools that launch from a launch template with one of these set run on an
# On-Demand Capacity Reservation (ODCR): reserved capacity, already paid for
# (rules.md, "Reserved capacity also includes").
_ODCR_TARGETS = ("capacity_reservation_id", "capacity_reservation_resource_group_arn")
_LAUNCH_TEMPLATE_USERS = ("aws_eks_node_group", "aws_autoscaling_group")


def _targets_reservation(template: Any) -> bool:
    spec = template.attrs.get("capacity_reservation_specification")
    blocks = spec if isinstance(spec, list) else [spec]
    for block in blocks:
        target = block.get("capacity_reservation_target") if isinstance(block, dict) else None
        for item in target if isinstance(target, list) else [target]:
            if isinstance(item, dict) and any(item.get(k) not in (None, "") for k in _ODCR_TARGETS):
                return True
    return False


def mark_capacity_reservations(resources: list) -> None:
    """Set ``reserved_by`` on node groups / autoscaling groups whose launch
    template (followed through ``references``) targets a reservation."""
    reserving = {r.address for r in resources if r.type == "aws_launch_template" and _targets_reservation(r)}
    if not reserving:
        return
    for r in resources:
        if r.type not in _LAUNCH_TEMPLATE_USERS:
            continue
        for path, addresses in r.references.items():
            if "launch_template" in path:
                hit = next((a for a in addresses if a in reserving), None)
                if hit is not None:
                    r.reserved_by = hit
                    break


def _reachable(start: list[str], edges: dict[str, set[str]]) -> set[str]:
    seen = set(start)
    stack = list(start)
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _vars_body(f: Any) -> Any:
    from mlcost_lint.model.terraform.tfjson import json_vars_to_hcl

    if getattr(f, "hcl", None) is not None:
        return f.hcl
    if getattr(f, "documents", None):
        return json_vars_to_hcl(f.documents[0])
    return None


class _Roots:
    """Root modules evaluated in order into ``build.model``, or replayed
    from a cached evaluation of the same inputs (root_cache.py). Sources are
    prepared only when some root has to be evaluated: a run whose roots all
    come from the cache reads no HCL tree at all."""

    def __init__(self, build: Any, called: dict[str, set[str]], tfvars_by_dir: dict,
                 extra_vars: list, cli_vars: dict[str, str], root_cache: Any, trees: Any = None) -> None:
        self.build = build
        self.trees = trees
        self.called = called
        self.tfvars_by_dir = tfvars_by_dir
        self.extra_vars = extra_vars
        self.cli_vars = cli_vars
        self.cache = root_cache
        self.diagnostics_start = len(build.model.diagnostics)
        self.prepared: set[str] = set()
        self.prepare_failed: set[str] = set()
        # root dir -> what the cache held for it, looked up by prefetch()
        self.looked_up: dict[str, Any] = {}
        # a module call reaching a source no root's static reach named (see root())
        build.prepare = self._prepare

    def _manifest(self, d: str) -> str | None:
        auto_vars = self.tfvars_by_dir.get(d, [])
        return self.cache.manifest_key(d, sorted(path for _, _, path in auto_vars))

    def prefetch(self, roots: list[str], jobs: int) -> None:
        """Look every root up now, and when the roots that miss read at
        least _PREFETCH_MIN_FILES files between them and those files' trees
        are still in the parse cache (a run after a change), evaluate them
        in up to ``jobs`` forked workers, which store them in the root cache.
        root() then replays them as it replays any cached root, budget
        check included, and evaluates itself whatever a worker did not
        store, so the model is the one a serial run builds. A run after an
        edit to a module every root calls evaluates every root again: on
        2 CPUs the second one was idle."""
        cache = self.cache
        manifests = {}      # root dir -> manifest key, of the roots the cache misses
        for d in roots:
            manifest = self._manifest(d)
            found = cache.lookup(manifest) if manifest is not None else None
            self.looked_up[d] = found
            if found is None and manifest is not None:
                manifests[d] = manifest
        todo = list(manifests)
        if len(todo) < 2 or self._files_read(todo) < _PREFETCH_MIN_FILES or not self._trees_on_disk(todo):
            return
        import threading

        if threading.active_count() > 1:
            return  # never fork beside another thread (a parse pool's manager): it may hold a lock
        if not _can_fork():
            return  # workers must inherit the sources and the cache as they are
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        global _PREFETCHING
        _PREFETCHING = self
        stored = 0
        try:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo)),
                                     mp_context=multiprocessing.get_context("fork")) as pool:
                stored = sum(pool.map(_prefetch_root, todo))
        except Exception:  # noqa: BLE001 - a refused fork or a dead worker: root() evaluates them here
            pass
        finally:
            _PREFETCHING = None
        cache.cache.writes += stored
        for d, manifest in manifests.items():
            self.looked_up[d] = cache.fetch(manifest)

    def _files_read(self, todo: list[str]) -> int:
        """Files the evaluation of ``todo`` reads, counted once per root
        that reads them: how much work a worker would take on."""
        dir_files = self.cache.dir_files
        return sum(len(dir_files.get(x, ())) for d in todo for x in _reachable([d], self.called))

    def _trees_on_disk(self, todo: list[str]) -> bool:
        """Whether most files of the sources ``todo`` reach have their tree
        still in the parse cache (a run after a change: the changed files
        are parsed, the rest come from the cache). A worker then loads those
        trees itself; a tree this process holds is copied page by page into
        each worker that reads it (in a cold run, with every tree here, that
        made each root cost about 55% more CPU in a worker: bench/README.md,
        4 December)."""
        from mlcost_lint.parse.document import ParsedFile

        reached = _reachable(todo, self.called)
        items = [item for d in reached for item in self.build.sources[d].pending]
        return _mostly_on_disk(sum(isinstance(item, ParsedFile) for item in items), len(items))

    def evaluate_alone(self, d: str) -> int:
        """Worker side of prefetch(): evaluate root ``d`` with a build of
        its own (a fresh budget: a cached evaluation is charged its steps
        when replayed) and store it; the number of cache entries written."""
        from mlcost_lint.model.terraform.budget import Budget
        from mlcost_lint.model.terraform.builder import Build

        build = self.build
        self.build = Build(build.sources, Budget(build.budget.limit), TerraformModel(), {})
        self.build.prepare = self._prepare
        self.looked_up[d] = None
        writes = self.cache.cache.writes
        try:
            self.root(d)
        finally:
            self.build = build
        return self.cache.cache.writes - writes

    def _prepare(self, src: Any) -> None:
        """Prepare one module source (once): its trees, loaded now for the
        files that came from the parse cache with their outline only, and
        its dependency order. Only the sources an evaluated root reaches are
        prepared: a change to one root's file reads and prepares that root
        and its modules, not every module directory in the scan."""
        from mlcost_lint.model.terraform.declarations import prepare

        if src.dir in self.prepared:
            return
        self.prepared.add(src.dir)
        src.add_pending(self.trees)
        try:
            prepare(src)
        except RecursionError:
            self.prepare_failed.add(src.dir)

    def finish(self) -> None:
        """The preparation diagnostics, in source order, where preparing
        every source before the first root would have put them. Every source
        a failed preparation belongs to is reached by a root that is then
        never cached (root()), so the set is the same whichever roots came
        from the cache."""
        found = [(Location(d), "configuration nested too deeply to evaluate")
                 for d in self.build.sources if d in self.prepare_failed]
        diagnostics = self.build.model.diagnostics
        diagnostics[self.diagnostics_start:self.diagnostics_start] = found
        # Break the build <-> _Roots cycle (build.prepare is our bound method):
        # the model stages run with the collector paused and then freeze
        # what is left, so a cycle kept every module source and its trees to
        # the end of the run (cold peak on bench/'s 2,000 files 317 -> 364 MB).
        from mlcost_lint.model.terraform.builder import prepare_nothing

        self.build.prepare = prepare_nothing

    def root(self, d: str) -> None:
        from mlcost_lint.model.terraform.builder import ModuleInstance
        from mlcost_lint.model.terraform.root_cache import RootEvaluation

        build, cache = self.build, self.cache
        model, budget = build.model, build.budget
        auto_vars = self.tfvars_by_dir.get(d, [])
        manifest = self._manifest(d) if cache is not None else None
        if d in self.looked_up:
            cached = self.looked_up.pop(d)
        else:
            cached = cache.lookup(manifest) if manifest is not None else None
        if cached is not None and not budget.exhausted and budget.steps + cached.steps <= budget.limit:
            budget.steps += cached.steps
            model.resources.extend(cached.resources)
            for key, config in zip(cached.provider_keys, cached.providers):
                if key not in build.provider_locations:
                    build.provider_locations.add(key)
                    model.providers.append(config)
            model.module_calls.extend(cached.module_calls)
            model.diagnostics.extend(cached.diagnostics)
            _secrets_taken(model, cached.resources, cached.secrets)
            return
        for x in sorted(_reachable([d], self.called)):
            self._prepare(build.sources[x])
        marks = (len(model.resources), len(model.providers), len(model.module_calls), len(model.diagnostics))
        steps, reported = budget.steps, build.budget_reported
        build.touched = {d}   # ModuleInstance._local_child adds every module directory it looks up
        inputs = _root_inputs(build.sources[d], auto_vars, self.extra_vars, self.cli_vars, build)
        instance = ModuleInstance(build, build.sources[d], inputs, {}, "", (), (d,), d)
        try:
            instance.run()
        except RecursionError:
            model.diagnostics.append((Location(d), "configuration nested too deeply to evaluate"))
            return
        # Every directory its calls name, also those no instance reached (count = 0):
        # their preparation is part of what a replay must reproduce.
        dirs = build.touched | _reachable([d], self.called)
        from mlcost_lint.secrets import resource_secrets

        providers, resources = model.providers[marks[1]:], model.resources[marks[0]:]
        # Nothing after the build changes a resource's attrs or tags: their
        # secrets are the same now as when the redact stage would look. Taken
        # now also without a cache: with parse workers this runs while they
        # parse the rest (parse_stage._ModelFeed), not in the redact stage after.
        secrets = frozenset().union(*map(resource_secrets, resources))
        _secrets_taken(model, resources, secrets)
        if manifest is None or budget.exhausted or build.budget_reported != reported or dirs & self.prepare_failed:
            return
        cache.store(manifest, dirs, RootEvaluation(
            resources=resources, providers=providers, secrets=secrets,
            # ModuleInstance adds a provider once per (block, module call path)
            provider_keys=[(c.location, c.module_calls) for c in providers],
            module_calls=model.module_calls[marks[2]:], diagnostics=model.diagnostics[marks[3]:],
            steps=budget.steps - steps))


# Roots that read fewer files than this between them are evaluated here:
# starting the workers cost about 50 ms more than evaluating 6 small roots
# in a run after a change on the real corpus, and a root evaluates at about
# 1 ms per file it reads on bench/'s 2,000-file tree, half of it saved with
# two workers.
_PREFETCH_MIN_FILES = 100
# The _Roots whose missing roots forked prefetch workers evaluate (set around the fork).
_PREFETCHING: _Roots | None = None


def may_prefetch(files: list, jobs: int) -> bool:
    """Whether building the model of ``files`` (the run's Terraform
    candidates, some with their tree in the parse cache) may evaluate roots
    in forked workers (_Roots.prefetch), asked before the roots are known:
    more than one job, fork available, most .tf trees still in the cache.
    A caller that runs a process pool of its own waits for it to end first."""
    from mlcost_lint.parse.document import FileKind

    if jobs <= 1:
        return False
    tf = [f for f in files if f.kind is FileKind.TERRAFORM]
    return _mostly_on_disk(sum(f.hcl is None and f.hcl_outline is not None for f in tf), len(tf)) and _can_fork()


def _mostly_on_disk(on_disk: int, total: int) -> bool:
    """More than half of the trees are in the parse cache, not in this process."""
    return on_disk * 2 > total


def _can_fork() -> bool:
    """Prefetch workers are forked (they inherit the sources and the cache):
    without fork (Windows) there is no prefetch."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _prefetch_root(d: str) -> int:
    """One prefetch task, in a forked worker: evaluate and store root ``d``."""
    run = _PREFETCHING
    if run is None:
        return 0
    try:
        return run.evaluate_alone(d)
    except Exception:  # noqa: BLE001 - not stored: the parent evaluates it
        return 0


def _secrets_taken(model: TerraformModel, resources: list, secrets: frozenset) -> None:
    model.known_secrets |= secrets
    model.secrets_taken.update(map(id, resources))


def _root_inputs(src: Any, auto_vars: list, var_files: list, cli_vars: dict[str, str], build: Any) -> dict:
    """Root variable values: tfvars (lexical order of *.auto.tfvars after
    terraform.tfvars), then -var-file, then -var. ``auto_vars``: the root
    directory's (file name, body, path)."""
    from mlcost_lint.model.terraform.builder import Input
    from mlcost_lint.model.terraform.evaluator import BudgetExceeded, Scope
    from mlcost_lint.model.terraform.types import ANY, is_complex
    from mlcost_lint.parse.hcl import HclSyntaxError, parse_expression

    def rank(item: tuple) -> tuple:
        name = item[0]
        return (0 if name.startswith("terraform.tfvars") else 1, name)

    bodies = [body for _, body, _ in sorted(auto_vars, key=rank)] + list(var_files)
    inputs: dict[str, Input] = {}
    empty = Scope({})

    def value(expr: Any) -> Any:
        # Each value has its own share of the budget (Budget.node_limit), counted from here: the
        # steps of the roots replayed from the cache before this one (a run after an edit) had
        # all counted against the first tfvars value, which then came out UNKNOWN.
        build.budget.start_value()
        try:
            return build.evaluator.evaluate(expr, empty)
        except BudgetExceeded:
            return UNKNOWN

    for body in bodies:
        for name, attr in body.attributes.items():
            inputs[name] = Input(value(attr.expr), False)
    value_of = value
    for name, text in cli_vars.items():
        spec = src.var_types.get(name, ANY)
        cli_value: Any = text
        if is_complex(spec) and spec.kind != "any" or text.lstrip().startswith(("[", "{")):
            try:
                cli_value = value_of(parse_expression(text))
            except HclSyntaxError:
                cli_value = UNKNOWN
        inputs[name] = Input(cli_value, False)
    return inputs


__all__ = ["build_terraform", "dir_of", "is_plan_json"]
