"""A reporting run (explicit files with project context: the pre-commit
hook) reads a slice of the project when an earlier run left an index
(mlcost_lint.project_slice), and reports exactly what the whole run reports
in its files; when the slice could lack something it reads everything."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mlc_testing import FIXTURES

from mlcost_lint.config import Settings
from mlcost_lint.pipeline import LintOptions, lint

# Projects with Terraform, workloads and training configs side by side.
_PROJECTS = ("demo", "demo-managed", "rules", "managed", "link", "training")
# Too small for a slice to leave out enough (slice_choice.MAX_SHARE), or
# every file changes the model of others (Azure ML compute).
_NOT_SLICED = frozenset({"demo-managed"})


def _lint(root: Path, cache: Path, report: frozenset[str] | None = None):
    old = os.getcwd()
    os.chdir(root)
    try:
        return lint(["."], Settings(root=root, select=["ALL"]),
                    LintOptions(cache_dir=cache, jobs=1, report_paths=report))
    finally:
        os.chdir(old)


def _key(f) -> tuple:
    return (f.code, f.location.path, f.location.line, f.location.column, f.message, f.address)


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return root


def _sliced(result, whole) -> bool:
    return len(result.files) < len(whole.files)


@pytest.mark.parametrize("name", _PROJECTS)
def test_each_file_alone_from_a_slice_equals_the_whole_run(name, tmp_path):
    root = _copy(name, tmp_path)
    cache = tmp_path / "cache"
    whole = _lint(root, cache)          # writes the index
    paths = sorted({pf.path for pf in whole.files if pf.path})
    by_path: dict[str, list] = {}
    for f in whole.findings:
        by_path.setdefault(f.location.path, []).append(_key(f))
    sliced = 0
    for path in paths:
        alone = _lint(root, cache, frozenset({path}))
        assert [_key(f) for f in alone.findings] == by_path.get(path, []), path
        assert alone.secrets == whole.secrets, path
        sliced += _sliced(alone, whole)
    assert (sliced >= 1) == (name not in _NOT_SLICED), sliced


@pytest.mark.parametrize("name", ["demo", "link", "training"])
def test_a_changed_file_alone_equals_the_whole_run_on_the_changed_tree(name, tmp_path):
    root = _copy(name, tmp_path)
    cache = tmp_path / "cache"
    whole = _lint(root, cache)
    paths = sorted(pf.path for pf in whole.files if pf.path and pf.path.endswith((".yaml", ".yml", ".sh")))
    sliced = 0
    for path in paths:
        file = root / path
        original = file.read_bytes()
        file.write_bytes(original.rstrip(b"\n") + b"\n# changed for the hook\n")
        try:
            alone = _lint(root, cache, frozenset({path}))
            changed = _lint(root, cache)
            assert [_key(f) for f in alone.findings] == \
                [_key(f) for f in changed.findings if f.location.path == path], path
            sliced += _sliced(alone, changed)
        finally:
            file.write_bytes(original)
        _lint(root, cache)          # the index of the tree as it was
    assert sliced >= 1


@pytest.mark.parametrize("max_update", [256, 1])
def test_hooks_one_after_another_store_only_their_changes(tmp_path, monkeypatch, max_update):
    # Each hook changes one more file and keeps the others' changes: each
    # reads a slice (the index is as the earlier hooks left it), reports
    # what the whole run on that tree reports, and stores its changed
    # entries as an update; past MAX_UPDATE, the whole index again.
    from mlcost_lint import project_slice

    monkeypatch.setattr(project_slice, "MAX_UPDATE", max_update)
    whole_writes = []
    real_store = project_slice.store
    monkeypatch.setattr(project_slice, "store", lambda cache, key, value: (
        whole_writes.append((type(value).__name__, Path(cache.root))), real_store(cache, key, value))[-1])
    root = _copy("demo", tmp_path)
    cache = tmp_path / "cache"
    whole = _lint(root, cache)
    assert whole_writes.count(("ProjectIndex", cache)) == 1
    # configs and workloads (a ParallelCluster config changes other files' models: read whole)
    paths = sorted(pf.path for pf in whole.files if pf.path.startswith(("configs/", "k8s/"))
                   and pf.path.endswith((".yaml", ".yml")))[:6]
    for i, path in enumerate(paths):
        file = root / path
        file.write_bytes(file.read_bytes().rstrip(b"\n") + f"\n# hook {i}\n".encode())
        alone = _lint(root, cache, frozenset({path}))
        changed = _lint(root, tmp_path / f"elsewhere{i}")     # the whole run, leaving this cache's index alone
        assert [_key(f) for f in alone.findings] == [_key(f) for f in changed.findings if f.location.path == path]
        assert _sliced(alone, changed), path
    full_index_writes = whole_writes.count(("ProjectIndex", cache)) - 1
    if max_update > len(paths):
        assert full_index_writes == 0
    else:       # folded into a whole index again, and the next hooks still read slices
        assert 1 <= full_index_writes <= len(paths)


def _demo(tmp_path: Path) -> tuple[Path, Path, object, str, str]:
    root = _copy("demo", tmp_path)
    cache = tmp_path / "cache"
    whole = _lint(root, cache)
    config = next(c.path for c in whole.project.training
                  if not c.embedded_in and not c.launch_line and c.path.endswith((".yaml", ".yml")))
    terraform = next(pf.path for pf in whole.files if pf.path.endswith(".tf"))
    return root, cache, whole, config, terraform


def test_a_config_is_reported_from_a_slice_without_the_unrelated_workloads(tmp_path):
    root, cache, whole, config, _ = _demo(tmp_path)
    alone = _lint(root, cache, frozenset({config}))
    read = {pf.path for pf in alone.files}
    assert config in read
    # no Terraform file is read (its summary stands for them); workloads not linked to the config are not
    assert not {pf.path for pf in alone.files if pf.path.endswith((".tf", ".tfvars"))}
    linked = {link.workload.document.path for link in whole.project.links.configs if link.config.path == config}
    unrelated = {w.document.path for w in whole.project.kubernetes.workloads} - linked - {config}
    assert unrelated and not unrelated & read
    # the GPU node pools are there, the other resources as stand-ins
    from mlcost_lint.model.absent import AbsentResource

    kinds = {type(r) for r in alone.project.terraform.resources}
    assert AbsentResource in kinds and len(kinds) == 2
    # every type is there; each stand-in once (one per type, mode and origin)
    summary, full = alone.project.terraform.resources, whole.project.terraform.resources
    assert {(r.type, r.mode, r.origin) for r in summary} == {(r.type, r.mode, r.origin) for r in full}
    stand_ins = [r for r in summary if isinstance(r, AbsentResource)]
    assert len(stand_ins) == len({(r.type, r.mode, r.origin) for r in stand_ins}) < len(full) - len(summary) + len(stand_ins)
    pools = [r for r in full if r.type == "aws_eks_node_group"]
    assert pools and [r.address for r in summary if r.type == "aws_eks_node_group"] == [r.address for r in pools]


def test_a_resource_left_out_that_a_check_reads_makes_the_run_read_everything(tmp_path, monkeypatch):
    # A workload rule that reads every resource's arguments: the slice's
    # stand-ins answer nothing but their type (a miss), so the run reads the
    # whole project and reports what the whole run does, with no rule failure.
    from mlcost_lint.engine import all_rules

    rule = next(r for r in all_rules() if r.code == "MLC204")
    original = rule.check

    def check(self, project, settings):
        touched = [r.attrs for r in project.terraform.resources]
        assert touched
        yield from original(self, project, settings)

    monkeypatch.setattr(rule, "check", check)
    root, cache, whole, _, _ = _demo(tmp_path)
    workload = "k8s/llama-8b-full-ft-job.yaml"
    alone = _lint(root, cache, frozenset({workload}))
    assert len(alone.files) == len(whole.files)
    assert not alone.rule_failures
    assert [_key(f) for f in alone.findings] == [_key(f) for f in whole.findings if f.location.path == workload]
    monkeypatch.setattr(rule, "check", original)
    assert len(_lint(root, cache, frozenset({workload})).files) < len(whole.files)


def test_files_changed_since_the_index_are_read_with_the_slice(tmp_path):
    # The first hook after a pull: other files changed with no run between.
    # They are read with their links (Terraform whole when no summary of its
    # new content is kept), and the reported file's findings are the whole
    # run's on the changed tree; the next hook finds that summary.
    root, cache, whole, config, terraform = _demo(tmp_path)
    other = next(pf.path for pf in whole.files if pf.path.startswith("k8s/") and pf.path.endswith(".yaml"))
    # a line on top moves every line below it; a comment at the end would leave the
    # file's meaning as it was (ParsedFile.meaning), and so would one in Terraform
    (root / other).write_bytes(b"# edited by a pull\n" + (root / other).read_bytes())
    (root / terraform).write_bytes((root / terraform).read_bytes() + b"\nlocals {\n  edited_by_a_pull = 1\n}\n")
    for turn in range(2):
        (root / config).write_bytes((root / config).read_bytes() + f"\n# hook {turn}\n".encode())
        alone = _lint(root, cache, frozenset({config}))
        changed = _lint(root, tmp_path / f"elsewhere{turn}")
        assert [_key(f) for f in alone.findings] == [_key(f) for f in changed.findings if f.location.path == config]
        assert alone.secrets == changed.secrets
        assert _sliced(alone, changed)
        read = {pf.path for pf in alone.files}
        assert (terraform in read) == (turn == 0) and (other in read) == (turn == 0)


def test_an_added_workload_is_read_with_the_slice(tmp_path):
    # A Job added by a pull runs the reported config: it is read as a changed
    # file (slice_choice.may_be_added), and the config's findings count it.
    root, cache, whole, config, _ = _demo(tmp_path)
    (root / "k8s" / "new-job.yaml").write_text(_JOB.format(name="new-job", config=f"/work/{config}"))
    alone = _lint(root, cache, frozenset({config}))
    changed = _lint(root, tmp_path / "elsewhere")
    assert _sliced(alone, changed) and "k8s/new-job.yaml" in {pf.path for pf in alone.files}
    assert ("k8s/new-job.yaml", config) in {(l.workload.document.path, l.config.path)
                                            for l in changed.project.links.configs}
    assert [_key(f) for f in alone.findings] == [_key(f) for f in changed.findings if f.location.path == config]


def test_an_added_config_makes_the_run_read_everything(tmp_path):
    # It offers a name: which runners now resolve to it is not in the index.
    root, cache, whole, config, _ = _demo(tmp_path)
    (root / "configs" / "new.yaml").write_text(_ACCELERATE.format(precision="bf16"))
    alone = _lint(root, cache, frozenset({config}))
    assert not _sliced(alone, _lint(root, tmp_path / "elsewhere"))


def test_a_changed_file_that_offers_other_names_makes_the_run_read_everything(tmp_path):
    # A training config that is no longer one: every "unique in the scan"
    # decision about its name may change, so no slice.
    root, cache, whole, config, _ = _demo(tmp_path)
    other = next(c.path for c in whole.project.training
                 if c.path != config and not c.embedded_in and c.path.endswith((".yaml", ".yml")))
    (root / other).write_text("plain: yaml\n")
    alone = _lint(root, cache, frozenset({config}))
    changed = _lint(root, tmp_path / "elsewhere")
    assert not _sliced(alone, changed)
    assert [_key(f) for f in alone.findings] == [_key(f) for f in changed.findings if f.location.path == config]


def test_a_terraform_file_is_reported_with_the_whole_project(tmp_path):
    root, cache, whole, _, terraform = _demo(tmp_path)
    alone = _lint(root, cache, frozenset({terraform}))
    assert not _sliced(alone, whole)
    assert [_key(f) for f in alone.findings] == [_key(f) for f in whole.findings if f.location.path == terraform]


def test_no_index_no_slice(tmp_path):
    root, cache, whole, config, _ = _demo(tmp_path)
    alone = _lint(root, tmp_path / "empty-cache", frozenset({config}))
    assert not _sliced(alone, whole)


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: trainer:1
          command: ["accelerate", "launch", "--config_file", "{config}", "train.py"]
          resources:
            limits:
              nvidia.com/gpu: 8
"""
_ACCELERATE = """\
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: {precision}
num_machines: 1
num_processes: 8
"""


def test_a_workload_that_names_another_config_widens_the_slice_to_it(tmp_path):
    root = _project(tmp_path, {
        "k8s/a.yaml": _JOB.format(name="a", config="/work/configs/a/accelerate.yaml"),
        "k8s/b.yaml": _JOB.format(name="b", config="/work/configs/b/accelerate.yaml"),
        "configs/a/accelerate.yaml": _ACCELERATE.format(precision="bf16"),
        "configs/b/accelerate.yaml": _ACCELERATE.format(precision="'no'"),
        # unrelated pairs: the slice stays under MAX_SHARE of the project
        **{f"k8s/{n}.yaml": _JOB.format(name=n, config=f"/work/configs/{n}/accelerate.yaml") for n in "cde"},
        **{f"configs/{n}/accelerate.yaml": _ACCELERATE.format(precision="bf16") for n in "cde"},
    })
    cache = tmp_path / "cache"
    whole = _lint(root, cache)
    assert {(l.workload.document.path, l.config.path) for l in whole.project.links.configs} == {
        ("k8s/a.yaml", "configs/a/accelerate.yaml"), ("k8s/b.yaml", "configs/b/accelerate.yaml"),
        *((f"k8s/{n}.yaml", f"configs/{n}/accelerate.yaml") for n in "cde")}
    # unchanged: a slice without b's files
    alone = _lint(root, cache, frozenset({"k8s/a.yaml"}))
    assert {pf.path for pf in alone.files} == {"k8s/a.yaml", "configs/a/accelerate.yaml"}
    # a.yaml now runs b's config, which the slice did not read (a miss): the slice is
    # widened to that config and its other runner (slice_choice.widened), not to the others
    (root / "k8s/a.yaml").write_text(_JOB.format(name="a", config="/work/configs/b/accelerate.yaml"))
    alone = _lint(root, cache, frozenset({"k8s/a.yaml"}))
    assert {pf.path for pf in alone.files} == {"k8s/a.yaml", "configs/a/accelerate.yaml", "k8s/b.yaml",
                                               "configs/b/accelerate.yaml"}
    changed = _lint(root, tmp_path / "fresh")
    assert [_key(f) for f in alone.findings] == [_key(f) for f in changed.findings if f.location.path == "k8s/a.yaml"]
    assert ("k8s/a.yaml", "configs/b/accelerate.yaml") in {
        (l.workload.document.path, l.config.path) for l in alone.project.links.configs}


_TWO_CONTAINERS = _JOB.format(name="c", config="/work/configs/a/accelerate.yaml") + """\
        - name: eval
          image: trainer:1
          command: ["accelerate", "launch", "--config_file", "accelerate.yaml", "eval.py"]
"""


def test_names_in_files_not_read_still_decide_which_config_a_path_means(tmp_path):
    # Container "eval" names the bare file name accelerate.yaml, which two
    # configs have: the whole run links nothing (ambiguous). The slice for
    # c.yaml reads configs/a (linked by "train") but not configs/b; b's name
    # still makes eval's path ambiguous (model.absent), as in the whole run.
    root = _project(tmp_path, {
        "k8s/c.yaml": _TWO_CONTAINERS,
        "configs/a/accelerate.yaml": _ACCELERATE.format(precision="bf16"),
        "configs/b/accelerate.yaml": _ACCELERATE.format(precision="'no'"),
        **{f"k8s/other{i}.yaml": _JOB.format(name=f"other{i}", config="y.yaml") for i in range(3)},
    })
    cache = tmp_path / "cache"
    whole = _lint(root, cache)

    def links(result):
        return sorted((l.container.name, l.config.path) for l in result.project.links.configs
                      if l.workload.document.path == "k8s/c.yaml")

    assert links(whole) == [("train", "configs/a/accelerate.yaml")]
    alone = _lint(root, cache, frozenset({"k8s/c.yaml"}))
    assert {pf.path for pf in alone.files} == {"k8s/c.yaml", "configs/a/accelerate.yaml"}
    assert links(alone) == links(whole)
    assert [_key(f) for f in alone.findings] == [_key(f) for f in whole.findings if f.location.path == "k8s/c.yaml"]


_CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: train-{name}
data:
  train.yaml: |
    model_name_or_path: EleutherAI/pythia-1.4b
    output_dir: /checkpoints/{name}
    deepspeed: configs/{name}/ds_zero.json
    per_device_train_batch_size: 1
    num_train_epochs: 1
"""
_DEEPSPEED = '{"zero_optimization": {"stage": 3}, "fp16": {"enabled": false}, "train_micro_batch_size_per_gpu": 1}\n'


def test_a_config_a_check_finds_by_name_is_read_with_the_file_naming_it(tmp_path):
    # The config embedded in cm-a.yaml names configs/a/ds_zero.json; the
    # rules resolve that name (rules/efficiency/gpu_training), not the link
    # stage. The whole run records the pair, so a slice for cm-a.yaml reads
    # the DeepSpeed file instead of meeting it as a name only (which made
    # the run read everything).
    root = _project(tmp_path, {
        **{f"k8s/cm-{n}.yaml": _CONFIG_MAP.format(name=n) for n in "abcd"},
        **{f"configs/{n}/ds_zero.json": _DEEPSPEED for n in "abcd"},
    })
    cache = tmp_path / "cache"
    whole = _lint(root, cache)
    assert ("k8s/cm-a.yaml", "configs/a/ds_zero.json") in whole.project.joined_by_checks
    alone = _lint(root, cache, frozenset({"k8s/cm-a.yaml"}))
    assert {pf.path for pf in alone.files} == {"k8s/cm-a.yaml", "configs/a/ds_zero.json"}
    assert not alone.project.absent.missed
    assert [_key(f) for f in alone.findings] == [_key(f) for f in whole.findings if f.location.path == "k8s/cm-a.yaml"]


def test_a_secret_of_a_file_not_read_is_still_redacted(tmp_path):
    root = _project(tmp_path, {
        "k8s/a.yaml": _JOB.format(name="a", config="/work/configs/a/accelerate.yaml"),
        "k8s/s.yaml": _JOB.format(name="s", config="x.yaml").replace(
            "          resources:", "          env:\n            - name: DB_PASSWORD\n"
                                   "              value: Zq8-hunter2-Kx93vLp\n          resources:"),
        "configs/a/accelerate.yaml": _ACCELERATE.format(precision="bf16"),
        **{f"k8s/other{i}.yaml": _JOB.format(name=f"other{i}", config="y.yaml") for i in range(3)},
    })
    cache = tmp_path / "cache"
    whole = _lint(root, cache)
    assert "Zq8-hunter2-Kx93vLp" in whole.secrets
    alone = _lint(root, cache, frozenset({"k8s/a.yaml"}))
    assert "k8s/s.yaml" not in {pf.path for pf in alone.files}
    assert alone.secrets == whole.secrets


def test_a_summary_holds_each_equal_location_and_string_once():
    """The resources of one module called many times have the same argument
    names, values and locations: the summary shares them, so its pickle
    holds each once (project_slice._shared_values)."""
    import pickle

    from mlcost_lint.model.cloud import CloudResource
    from mlcost_lint.model.core import Location
    from mlcost_lint.project_slice import _shared_values

    def resource(i: int) -> CloudResource:
        name = "".join(["instance", "_types"])      # equal strings, not the same object
        return CloudResource("aws_eks_node_group", "gpu", f"module.p{i}.aws_eks_node_group.gpu", "aws",
                             Location("modules/pool/main.tf", 1, 1), attrs={name: ["p4d.24xlarge"], "n": i},
                             attr_locations={name: Location("modules/pool/main.tf", 3, 3)},
                             tags={"team": "".join(["vi", "sion"])})

    seen: dict = {}
    a, b = _shared_values(resource(1), seen), _shared_values(resource(2), seen)
    assert (a.attrs, a.tags) == (resource(1).attrs, resource(1).tags) and b.attrs["n"] == 2
    key_a, key_b = next(iter(a.attrs)), next(iter(b.attrs))
    assert key_a is key_b and a.attrs[key_a][0] is b.attrs[key_b][0] and a.tags["team"] is b.tags["team"]
    assert a.location is b.location and a.attr_locations[key_a] is b.attr_locations[key_b]
    assert len(pickle.dumps([a, b])) < len(pickle.dumps([resource(1), resource(2)]))


def test_entries_without_secrets_share_one_empty_set(tmp_path):
    """Most files have no secret-looking value: their entries hold one empty
    set, which the index pickles once (building an empty set per entry was a
    fifth of loading a hook's index on bench/'s 8,000 files)."""
    from mlcost_lint.cache import load_payload
    import pickle

    from mlcost_lint.project_slice import build

    root = _copy("link", tmp_path)
    whole = _lint(root, tmp_path / "cache")
    index = build(whole.project, whole.files, {pf.path: f"key {pf.path}" for pf in whole.files})
    empty = [e.secrets for e in index.files.values() if e.secrets is not None and not e.secrets]
    assert len(empty) >= 10 and len({id(s) for s in empty}) == 1
    loaded = load_payload(pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL))
    assert loaded == index
    assert len({id(e.secrets) for e in loaded.files.values() if e.secrets is not None and not e.secrets}) == 1
