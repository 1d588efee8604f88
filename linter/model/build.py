"""The model stage: parsed files -> :class:`Project`.

Content decides what each YAML/JSON document is: a Kubernetes object
(``apiVersion`` + ``kind``), a Terraform plan, a training config (the
framework readers' detection), or nothing we read (skipped silently).
Heavy readers are imported only when a file needs them.

A reader that fails on some input is a bug, but one document must never
cost the user the rest of the run: the failure becomes a finding on that
document (MLC001, "internal error ... please report") and the run goes on.
"""

from __future__ import annotations

from dataclasses import field
from typing import Callable

from mlcost_lint.config import Settings
from mlcost_lint.gc_pause import gc_paused
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.kubernetes_build import add_document, is_kubernetes_object
from mlcost_lint.model.parallelcluster import compute_resources, is_parallelcluster
from mlcost_lint.model.project import Project
from mlcost_lint.model.skypilot import read_skypilot, skypilot_task
from mlcost_lint.model.terraform import is_plan_json
from mlcost_lint.model.vertex import is_vertex_job, read_vertex
from mlcost_lint.model.vertex_pipeline import is_vertex_pipeline, read_vertex_pipeline
from mlcost_lint.parse.document import TERRAFORM_KINDS, Document, FileKind, ParsedFile, ParseError


def _guarded(pf: ParsedFile, line: int, what: str, step: Callable[[], None]) -> None:
    try:
        step()
    except RecursionError:
        pf.errors.append(ParseError(pf.path, line, 1, f"{what}: nesting too deep to model"))
    except Exception as exc:  # noqa: BLE001 - see the module docstring
        pf.errors.append(ParseError(
            pf.path, line, 1, f"{what}: internal error {type(exc).__name__} (please report); file skipped"))


def build_project(parsed: list[ParsedFile], settings: Settings, *,
                  var_files: list[ParsedFile] = (), cli_vars: dict[str, str] | None = None,
                  root_cache=None, hcl_trees=None) -> Project:
    """``root_cache``: evaluated Terraform root modules to reuse
    (model.terraform.root_cache.RootCache), or None to evaluate all.
    ``hcl_trees``: loads the trees of cached .tf files when a root module is
    evaluated (cache_trees.HclTrees), or None when every tree is loaded."""
    builder = ProjectBuilder(settings, var_files=var_files, cli_vars=cli_vars, root_cache=lambda: root_cache,
                             hcl_trees=hcl_trees)
    with gc_paused():
        builder.terraform([pf for pf in parsed if pf.kind in TERRAFORM_CANDIDATES])
        for pf in parsed:
            builder.add(pf)
    return builder.finish(parsed)


# What the Terraform step reads: Terraform's own kinds, and JSON, which may
# be a plan (``terraform show -json``), known only from its content.
TERRAFORM_CANDIDATES = frozenset({*TERRAFORM_KINDS, FileKind.JSON})


class ProjectBuilder:
    """The model stage in three calls, so that it can run while files are
    still being parsed (parse_stage._parse_many feeds it as results arrive):

    1. ``terraform(files)``: every parsed file whose kind is in
       TERRAFORM_CANDIDATES, in input order. Terraform is evaluated first:
       its HCL trees are then released (_release_hcl) before the
       Kubernetes and training models grow into that memory.
    2. ``add(pf)``: every parsed file, in input order, after (1). Files
       Terraform took are passed over; the others are read one document at
       a time (Kubernetes objects, training configs, Slurm scripts, Azure
       ML, Vertex AI, SkyPilot, ParallelCluster).
    3. ``finish(parsed)``: what joins files (Kustomize fragments, managed
       jobs), once all are added; the training configs ConfigMaps embed
       come after every file's own.

    The calls in this order give the same Project whether the files come
    all at once (build_project) or as they are parsed. ``root_cache`` is a
    function returning build_project's root_cache, called when Terraform is
    evaluated (a pipeline knows its file keys only then). ``jobs``: the
    processes Terraform roots the root cache misses may be evaluated in
    (model.terraform._Roots.prefetch). The other arguments are
    build_project's."""

    def __init__(self, settings: Settings, *, var_files: list[ParsedFile] = (),
                 cli_vars: dict[str, str] | None = None, root_cache: Callable[[], object] = lambda: None,
                 hcl_trees=None, jobs: int = 1) -> None:
        self.settings = settings
        self.jobs = jobs
        self.var_files = list(var_files)
        self.cli_vars = cli_vars or {}
        self.root_cache = root_cache
        self.hcl_trees = hcl_trees
        self.project = Project(files=[])
        self.terraform_files: list[ParsedFile] = []
        # A sliced run's Terraform side, instead of evaluating Terraform files
        # (mlcost_lint.project_slice.TerraformSummary): set before terraform().
        self.terraform_summary = None
        # The roots the parse workers evaluated (model/terraform/worker_roots.py): set before terraform().
        self.worker_roots = None
        self.azureml_computes: list = []
        self.pcluster: list = []
        self.embedded: list = []

    def terraform(self, candidates: list[ParsedFile]) -> None:
        if self.terraform_summary is not None:
            # the slice holds no Terraform file (a plan included): nothing to evaluate
            absent = self.project.absent
            self.project.terraform = self.terraform_summary.model(absent.missed if absent is not None else [])
            _release_hcl(self.project, candidates)
            return
        for pf in candidates:
            if pf.errors or pf.skipped_reason:
                continue
            if _is_plan(pf):
                pf.kind = FileKind.TERRAFORM_PLAN
            if pf.kind in TERRAFORM_KINDS:
                self.terraform_files.append(pf)
        if self.terraform_files or self.var_files:
            root_cache, jobs = self.root_cache(), self.jobs
            if self.worker_roots is not None:
                # the workers' evaluations first, the run's root cache behind them; no prefetch
                self.worker_roots.disk, root_cache, jobs = root_cache, self.worker_roots, 1
            _build_terraform(self.project, self.terraform_files, self.settings, list(self.var_files),
                             self.cli_vars, root_cache, self.hcl_trees, jobs)
        _release_hcl(self.project, candidates)

    def use_worker_roots(self) -> None:
        """The parse workers evaluate Terraform roots and send .tf files
        without their trees (parse_chunks.fed_chunks); a tree is loaded, from
        the cache or parsed again, only for a root the parent evaluates."""
        from mlcost_lint.cache_trees import HclTrees
        from mlcost_lint.model.terraform.worker_roots import WorkerRoots, preload

        preload()
        self.worker_roots = WorkerRoots()
        if self.hcl_trees is None:
            self.hcl_trees = HclTrees(None, self.settings.max_nesting_depth)

    def may_fork_for_terraform(self, candidates: list[ParsedFile]) -> bool:
        """Whether terraform(candidates) may evaluate roots in forked workers
        (a cache, whose trees come with hcl_trees; model.terraform.may_prefetch)."""
        if self.hcl_trees is None or self.worker_roots is not None:
            return False
        from mlcost_lint.model.terraform import may_prefetch

        return may_prefetch(candidates, self.jobs)

    def add(self, pf: ParsedFile) -> None:
        if pf.kind in TERRAFORM_KINDS:
            return
        part = pf.model if pf.model is not None else read_file_model(pf)
        kubernetes = self.project.kubernetes
        kubernetes.workloads.extend(part.workloads)
        kubernetes.config_maps.extend(part.config_maps)
        for kind, count in part.other_kinds.items():
            kubernetes.other_kinds[kind] = kubernetes.other_kinds.get(kind, 0) + count
        self.project.training.extend(part.training)
        if part.not_read:
            self.project.not_read.setdefault(pf.path, []).extend(part.not_read)
        self.pcluster.extend(part.pcluster)
        self.azureml_computes.extend(part.azureml_computes)
        self.embedded.extend(part.embedded)
        if part.splits:
            from mlcost_lint.link.shell import remember_split

            for text, split in part.splits:
                remember_split(text, split)

    def finish(self, parsed: list[ParsedFile]) -> Project:
        with gc_paused():
            return self._finish(parsed)

    def _finish(self, parsed: list[ParsedFile]) -> Project:
        from mlcost_lint.model.kustomize import split_fragments

        project = self.project
        project.files = parsed
        split_fragments(project.kubernetes, parsed)
        project.training.extend(self.embedded)
        if self.terraform_files or self.var_files:
            _add_managed_terraform(project, self.terraform_files or list(self.var_files))
        elif self.terraform_summary is not None:
            _add_summarised_jobs(project)
        if self.azureml_computes or any(w.managed is not None for w in project.kubernetes.workloads):
            _resolve_managed(project, self.azureml_computes)
        project.terraform.resources.extend(self.pcluster)   # node pools Terraform rules do not know by type
        for workload in (*project.kubernetes.workloads, *project.kubernetes.fragments):
            for template in workload.templates:
                for container in template.containers:
                    container.freeze()
        return project


@dataclass(slots=True)
class FileModel:
    """What one file adds to the model on its own: its Kubernetes objects
    (the fields model.kubernetes_build.add_document fills), training
    configs, Slurm / Azure ML / Vertex AI / SkyPilot jobs, ParallelCluster
    and Azure ML compute pools, and why documents were not read. Read where
    the file is parsed when the result is cached (a parse worker) and cached
    with it (ParsedFile.model), so that a run that finds the file in the
    cache, as every hook and incremental run does for all but the changed
    files, only appends these lists (ProjectBuilder.add)."""

    workloads: list = field(default_factory=list)
    config_maps: list = field(default_factory=list)
    other_kinds: dict[str, int] = field(default_factory=dict)
    training: list = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)
    pcluster: list = field(default_factory=list)
    azureml_computes: list = field(default_factory=list)
    # Training configs held in its ConfigMaps' data values, ConfigMap by ConfigMap.
    embedded: list = field(default_factory=list)
    # (script text, link.shell.split_of) of the scripts its jobs run, split
    # while they were read: the link stage splits them again otherwise.
    splits: list[tuple[str, tuple]] = field(default_factory=list)
    # The secret-looking values of the embedded training configs' documents
    # (which collect_secrets reads), for a run that does not read this file
    # (mlcost_lint.project_slice).
    embedded_secrets: frozenset[str] = frozenset()


# What read_file_model imports only when a file needs it: imported by
# preload_readers before parse workers are forked, as parse.preload does
# for the parsers (tests/perf/test_lean_startup.py checks the list).
_LAZY_READERS = ("mlcost_lint.model.slurm", "mlcost_lint.model.training.detect", "mlcost_lint.model.azureml")


def preload_readers() -> None:
    import importlib

    for name in _LAZY_READERS:
        importlib.import_module(name)


def read_file_model(pf: ParsedFile) -> FileModel:
    """``pf``'s FileModel, also kept as ``pf.model``. A reader that fails on
    a document records an error on the file (_guarded) and the other
    documents are still read. Empty for a file with errors, skipped, of a
    Terraform kind, or a Terraform plan (ProjectBuilder.terraform takes
    those)."""
    part = FileModel()
    pf.model = part
    if pf.errors or pf.skipped_reason or pf.kind in TERRAFORM_KINDS:
        return part
    if _is_plan(pf):
        return part
    if pf.slurm is not None:
        _guarded(pf, 1, "Slurm batch script", lambda: _add_slurm(part, pf))
        _keep_splits(part)
        return part
    for doc in pf.documents:
        if _is_azureml(doc.data):
            _guarded(pf, doc.start_line, "Azure ML YAML", lambda doc=doc: _add_azureml(part, doc))
        if is_vertex_job(doc.data):
            _guarded(pf, doc.start_line, "Vertex AI custom job",
                     lambda doc=doc: part.workloads.extend(read_vertex(doc)))
            continue
        if is_vertex_pipeline(doc.data):
            _guarded(pf, doc.start_line, "Vertex AI pipeline spec", lambda doc=doc: _add_vertex_pipeline(part, doc))
            continue
        sky, why = skypilot_task(doc.data)
        if sky:
            _guarded(pf, doc.start_line, "SkyPilot task", lambda doc=doc: part.workloads.append(read_skypilot(doc)))
            continue
        if why:
            part.not_read.append(why)
        if is_parallelcluster(doc.data):
            _guarded(pf, doc.start_line, "ParallelCluster config",
                     lambda doc=doc: part.pcluster.extend(compute_resources(doc)))
            continue
        if is_kubernetes_object(doc.data):
            _guarded(pf, doc.start_line, "Kubernetes object", lambda doc=doc: add_document(part, doc))
        else:
            _guarded(pf, doc.start_line, "training config", lambda doc=doc: _add_training(part, doc))
    for cm in part.config_maps:
        _guarded(pf, cm.loc().line, "ConfigMap data", lambda cm=cm: _add_embedded(part, cm))
    if part.embedded:
        from mlcost_lint.secrets import data_secrets

        _guarded(pf, 1, "ConfigMap data", lambda: setattr(
            part, "embedded_secrets", data_secrets(config.document.data for config in part.embedded)))
    return part


def _is_plan(pf: ParsedFile) -> bool:
    """A JSON file holding a Terraform plan (``terraform show -json``)."""
    return pf.kind is FileKind.JSON and pf.slurm is None and bool(pf.documents) and is_plan_json(pf.documents[0].data)


def _keep_splits(part: FileModel) -> None:
    from mlcost_lint.link.shell import split_of

    for workload in part.workloads:
        for template in workload.templates:
            for container in template.containers:
                split = split_of(container.script[0]) if container.script else None
                if split is not None:
                    part.splits.append((container.script[0], split))


def _add_vertex_pipeline(part: FileModel, doc: Document) -> None:
    jobs = read_vertex_pipeline(doc)
    part.workloads.extend(jobs)
    if not jobs:
        part.not_read.append(
            "a compiled pipeline spec with no custom job whose worker_pool_specs are literal and name accelerators "
            "(pipeline parameters are unknown)")


def _release_hcl(project: Project, parsed: list[ParsedFile]) -> None:
    """Drop the HCL trees once Terraform is evaluated: nothing after the
    model reads them but the secret collection, which takes its values now
    (Project.hcl_secrets). They are the largest thing a run holds (77 MB
    of 294 MB after the model on the 2,000-file bench repository) and the
    links, rules and findings reuse that memory. Files that came from the
    parse cache are copies: the cache entries keep their trees."""
    from mlcost_lint.secrets import collect_hcl_secrets

    project.hcl_secrets = collect_hcl_secrets(parsed)
    for pf in parsed:
        pf.hcl = None


def _build_terraform(project: Project, files: list[ParsedFile], settings: Settings,
                     var_files: list[ParsedFile], cli_vars: dict[str, str], root_cache,
                     hcl_trees=None, jobs: int = 1) -> None:
    from mlcost_lint.model.terraform import build_terraform

    try:
        project.terraform = build_terraform(files, settings, var_files=var_files, cli_vars=cli_vars,
                                            root_cache=root_cache, trees=hcl_trees, jobs=jobs)
    except RecursionError:
        files[0].errors.append(ParseError(files[0].path, 1, 1, "Terraform: nesting too deep to evaluate"))
    except Exception as exc:  # noqa: BLE001 - see the module docstring
        first = files[0] if files else var_files[0]
        first.errors.append(ParseError(
            first.path, 1, 1,
            f"Terraform evaluation: internal error {type(exc).__name__} (please report); Terraform rules skipped"))


def _add_managed_terraform(project: Project, files: list[ParsedFile]) -> None:
    """Training jobs of managed services declared in Terraform (SageMaker)."""
    from mlcost_lint.model.managed_sagemaker import add_sagemaker_jobs

    _guarded(files[0], 1, "SageMaker training jobs", lambda: add_sagemaker_jobs(project))


def _add_summarised_jobs(project: Project) -> None:
    """SageMaker jobs of a sliced run's Terraform summary; a job that reads
    a resource left out of it is a miss (model.absent): the run reads all."""
    from mlcost_lint.model.absent import AbsentResourceError, record_miss
    from mlcost_lint.model.managed_sagemaker import add_sagemaker_jobs

    try:
        add_sagemaker_jobs(project)
    except AbsentResourceError as exc:
        record_miss(project.absent, str(exc))


def _is_azureml(data) -> bool:
    from mlcost_lint.model.azureml import azureml_kind

    return azureml_kind(data) is not None


def _add_azureml(part: FileModel, doc: Document) -> None:
    from mlcost_lint.model.azureml import read_azureml

    jobs, found = read_azureml(doc)
    part.workloads.extend(jobs)
    part.azureml_computes.extend(found)


def _resolve_managed(project: Project, computes: list) -> None:
    """Compute YAML joins the cloud resources; Azure ML jobs take the capacity of the compute they name."""
    from mlcost_lint.model.azureml import resolve_compute

    project.terraform.resources.extend(computes)
    resolve_compute(project)
def _add_slurm(part: FileModel, pf: ParsedFile) -> None:
    from mlcost_lint.model.slurm import build_slurm_job

    part.workloads.append(build_slurm_job(pf.slurm, pf.path))


def _add_training(part: FileModel, doc: Document) -> None:
    from mlcost_lint.model.training.detect import read_training_config

    config = read_training_config(doc)
    if config is not None:
        part.training.append(config)


def _add_embedded(part: FileModel, cm) -> None:
    from mlcost_lint.model.training.detect import read_embedded_configs

    for key, text in cm.data.items():
        pos = cm.document.position(cm.key_path + ("data", key)) or (cm.document.start_line, 1)
        # A multi-line value is a block scalar (`key: |`): its text starts on
        # the next line, indented under the key.
        line, column = (pos[0] + 1, pos[1] + 2) if "\n" in text.rstrip("\n") else pos
        part.embedded.extend(read_embedded_configs(
            text, cm.document.path, line, cm.address, key, base_column=column))
