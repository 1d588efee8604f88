"""Start-up stays lean: a run imports only what it needs.

No timing here (the shared CI box is too noisy for that; bench/ measures).
Each test runs the real CLI in a fresh interpreter and records which
modules were loaded when it finished, so a new top-level import of a heavy
library anywhere in the import chain fails here with the module's name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Heavy at import time (measured with python -X importtime on the CI box):
# the HCL parser and its Lark grammar, JSON-schema validation, the
# round-trip YAML library used only for --fix, the SARIF object model.
HEAVY = ("hcl2", "lark", "jsonschema", "ruamel", "sarif_om", "attrs")

_PROBE = """
import json, os, sys
sys.argv = ["mlcost-lint", *json.loads(sys.argv[1])]
from mlcost_lint.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
with open(os.environ["MODULES_OUT"], "w") as fh:
    json.dump({"code": code, "modules": sorted(sys.modules)}, fh)
"""


def _modules_after(args: list[str], cwd: Path, tmp_path: Path) -> tuple[int, set[str]]:
    out = tmp_path / "modules.json"
    # The cache key lives outside the scanned tree (a key inside it is refused: hostile-input rules).
    env = {**os.environ, "MODULES_OUT": str(out), "XDG_CACHE_HOME": str(tmp_path.parent / f"{tmp_path.name}-xdg")}
    r = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], cwd=cwd, env=env,
                       capture_output=True, timeout=120)
    assert out.exists(), r.stderr.decode()
    data = json.loads(out.read_text())
    return data["code"], set(data["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_version_imports_nothing_heavy(tmp_path: Path):
    code, modules = _modules_after(["--version"], tmp_path, tmp_path)
    assert code == 0
    assert _heavy(modules) == []
    # --version does not even load the pipeline, the rules or the parsers.
    assert not any(m.startswith(("mlcost_lint.pipeline", "mlcost_lint.engine", "mlcost_lint.parse",
                                 "mlcost_lint.rules", "yaml")) for m in modules)


@pytest.mark.parametrize("name, text", [
    ("accelerate.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                        "mixed_precision: bf16\nnum_processes: 8\n"),
    ("job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n"
                 "    spec:\n      restartPolicy: Never\n      containers:\n        - name: t\n"
                 "          image: ghcr.io/acme/train:1\n"),
])
def test_one_yaml_file_does_not_import_the_hcl_parser(tmp_path: Path, name: str, text: str):
    (tmp_path / name).write_text(text)
    for extra in (["--no-cache"], ["--cache-dir", str(tmp_path / "c")], ["--cache-dir", str(tmp_path / "c")]):
        code, modules = _modules_after([name, "--exit-zero", *extra], tmp_path, tmp_path)
        assert code == 0
        assert _heavy(modules) == [], extra
        if extra == ["--no-cache"]:
            assert "yaml" in modules  # it did parse the file (a warm run need not)


def test_one_yaml_file_in_a_project_with_only_yaml_skips_hcl(tmp_path: Path):
    """Pre-commit in a repository: the project is read for context; with no
    Terraform in it, the HCL parser never loads."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "sft.yaml").write_text(
        "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 4\nsave_steps: 500\n")
    (tmp_path / "k8s.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\n")
    code, modules = _modules_after(["configs/sft.yaml", "--exit-zero", "--no-cache"], tmp_path, tmp_path)
    assert code == 0
    assert _heavy(modules) == []


def test_terraform_run_does_load_the_parser(tmp_path: Path):
    """The probe sees imports at all (guards against a probe that always passes)."""
    (tmp_path / "main.tf").write_text('resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n')
    code, modules = _modules_after(["main.tf", "--exit-zero", "--no-cache"], tmp_path, tmp_path)
    assert code == 0
    assert "mlcost_lint.parse.hcl_descent" in modules
    # the recursive-descent parser needs neither python-hcl2 nor Lark (issue 17)
    assert "hcl2" not in modules and "lark" not in modules
    assert "sarif_om" not in modules and "jsonschema" not in modules


def test_warm_cached_terraform_run_does_not_load_the_parser(tmp_path: Path):
    """A cache hit for every file means no parser at all, even for .tf."""
    (tmp_path / "main.tf").write_text('resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n')
    args = ["main.tf", "--exit-zero", "--cache-dir", str(tmp_path / "c")]
    _modules_after(args, tmp_path, tmp_path)                 # fills the cache
    code, modules = _modules_after(args, tmp_path, tmp_path)
    assert code == 0
    assert "hcl2" not in modules and "lark" not in modules
    assert "mlcost_lint.parse.hcl_descent" not in modules


_WORKER_PROBE = """
import os, sys
from pathlib import Path
parent, log = os.getpid(), sys.argv[1]
def audit(event, args):
    # Imports in a forked parse worker (any other process than this one).
    if event == "import" and os.getpid() != parent:
        with open(log, "a") as fh:
            fh.write(args[0] + "\\n")
sys.addaudithook(audit)
from mlcost_lint.config import load_settings
from mlcost_lint.discover import discover
from mlcost_lint.parse_stage import parse_all
from mlcost_lint.pipeline import LintOptions
settings = load_settings(None, Path("."))
found = discover(["."], settings.exclude, settings.root)
parsed = parse_all(found.files, settings, LintOptions(use_cache=False, jobs=2))
assert len(parsed) == len(found.files) == 90, len(parsed)
assert not any(pf.errors for pf in parsed), [pf.errors for pf in parsed if pf.errors]
# with a cache the workers also read each file's model (model.build.preload_readers)
cached = parse_all(found.files, settings, LintOptions(cache_dir=Path(sys.argv[2]), jobs=2))
assert all((pf.model is None) == pf.path.endswith(".tf") for pf in cached), "a .tf file's model is not read"
assert sum(1 for pf in cached if pf.model and pf.model.workloads) == 10, "the Slurm scripts' jobs"
"""


@pytest.mark.skipif(sys.platform == "win32", reason="parse workers are forked only where fork exists")
def test_forked_parse_workers_import_no_parser_of_their_own(tmp_path: Path):
    """The parent imports the readers the files need before it forks the
    parse workers (parse.preload), so a worker inherits them instead of
    importing and compiling them again. Every kind of file is in the tree, so
    a reader that starts importing something new fails here until preload's
    table names it."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    pad = "#" + "x" * 78 + "\n"
    for i in range(30):      # enough files and bytes for the parallel path (parse_stage._PARALLEL_MIN_*)
        (tmp_path / f"m{i}.tf").write_text(f'resource "aws_s3_bucket" "b{i}" {{\n  bucket = "b-{i}"\n}}\n'
                                           + pad * 60)
        (tmp_path / f"c{i}.yaml").write_text(f"learning_rate: 0.0{i + 1}\nbf16: true\n" + pad * 60)
        if i % 3 == 0:      # every reader parse_bytes has: HCL, YAML, JSON, Slurm and shell scripts
            (tmp_path / f"d{i}.json").write_text(f'{{"train_batch_size": {i + 8}}}\n')
            (tmp_path / f"j{i}.sbatch").write_text(f"#!/bin/bash\n#SBATCH --gpus-per-node={i % 8 + 1}\n"
                                                   "srun python train.py\n" + pad * 20)
            (tmp_path / f"s{i}.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node=2 train.py\n" + pad * 20)
    log = tmp_path.parent / f"{tmp_path.name}-imports.txt"
    r = subprocess.run([sys.executable, "-c", _WORKER_PROBE, str(log), str(tmp_path.parent / f"{tmp_path.name}-cache")],
                       cwd=tmp_path, capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    imported = log.read_text().split() if log.exists() else []
    ours = [m for m in imported if m.startswith(("mlcost_lint", "yaml", "encodings"))]
    assert ours == [], ours


_LATER_STAGES_PROBE = """
import os, sys
from pathlib import Path
import mlcost_lint.parse_stage as parse_stage
# the demo is small: the parse workers start for any amount of work
parse_stage._PARALLEL_MIN_FILES = parse_stage._PARALLEL_MIN_BYTES = 1
from mlcost_lint import later_stages
from mlcost_lint.config import load_settings
from mlcost_lint.pipeline import LintOptions, lint

state = {"loaded": 0, "after": []}
load = later_stages.load_later_stages
def loaded(settings):
    load(settings)
    state["loaded"] += 1
later_stages.load_later_stages = loaded
def audit(event, args):
    if event == "import" and state["loaded"] and os.getpid() == parent:
        state["after"].append(args[0])
parent = os.getpid()
sys.addaudithook(audit)
settings = load_settings(None, Path("."))
result = lint(["."], settings, LintOptions(use_cache=False, jobs=2))
assert state["loaded"] == 1, state["loaded"]
ours = sorted({m for m in state["after"] if m.startswith(("mlcost_lint", "rules", "regex"))})
assert ours == [], ours
one_process = lint(["."], settings, LintOptions(use_cache=False, jobs=1))
assert state["loaded"] == 1, "loaded ahead with no parse worker to wait for"
assert len(result.findings) == len(one_process.findings) > 0
"""


@pytest.mark.skipif(sys.platform == "win32", reason="parse workers are forked only where fork exists")
def test_later_stages_are_loaded_while_the_workers_parse():
    """A run with parse workers loads what the stages after parsing import
    (later_stages.py) while the workers parse, once: over the demo, which has
    every kind of input and finding, no module of ours is imported after
    that. A stage that starts importing something new fails here until the
    table names it. A run without workers does not load them ahead."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    r = subprocess.run([sys.executable, "-c", _LATER_STAGES_PROBE], cwd=ROOT / "fixtures" / "demo",
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()


def test_a_run_that_runs_no_rule_imports_none(tmp_path: Path):
    """A whole run after comments alone changed takes every finding from the
    last run (mlcost_lint.incremental): it chooses rules, judges unused
    suppressions and names rules in its report from the registry
    (mlcost_lint.registry), and imports no rule module. It reads no model
    either: no model reader (a .tf file parsed for its meaning has an empty
    model, not read), no linker, and not the Project's modules."""
    import shutil

    root = tmp_path / "demo"
    shutil.copytree(ROOT / "fixtures" / "demo", root, ignore=shutil.ignore_patterns(".mlcost_lint_cache"))
    args = [".", "--exit-zero", "--format", "json", "--cache-dir", str(tmp_path / "cache")]
    code, modules = _modules_after(args, root, tmp_path)        # fills the cache
    assert code == 0 and any(m.startswith("mlcost_lint.rules.") for m in modules)
    config = root / "infra" / "pcluster-config.yaml"
    config.write_bytes(config.read_bytes() + b"\n# reviewed\n")
    storage = root / "infra" / "storage.tf"
    storage.write_bytes(storage.read_bytes() + b"\n# reviewed\n")
    code, modules = _modules_after(args, root, tmp_path)
    assert code == 0
    assert sorted(m for m in modules if m.startswith("mlcost_lint.rules.")) == []
    model = ("mlcost_lint.model.build", "mlcost_lint.model.project", "mlcost_lint.model.training",
             "mlcost_lint.model.kubernetes", "mlcost_lint.link")
    assert sorted(m for m in modules if m.startswith(model)) == []
