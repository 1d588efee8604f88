"""``set -a`` in a Slurm batch script (issue 13): every assignment until
``set +a`` is exported, so the training processes see it (MLC403)."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.slurm import exported_vars

BASE = FIXTURES / "rules" / "MLC403"
EXPECTED = [
    ("MLC403", "slurm-allexport/train.sbatch", 9, 1,
     "NCCL_DEBUG=INFO exported in Slurm job allexport (8 GPUs per node: #SBATCH --gres=gpu:8 on line 4): NCCL logs "
     "every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it"),
    ("MLC403", "slurm-allexport/train.sbatch", 13, 1,
     "CUDA_LAUNCH_BLOCKING=1 exported in Slurm job allexport (8 GPUs per node: #SBATCH --gres=gpu:8 on line 4): "
     "every CUDA kernel launch waits for the kernel to finish; remove it"),
]


def test_set_a_exports_until_set_plus_a():
    result = lint_dir(BASE / "slurm-allexport", cwd=BASE)
    assert [(f.code, f.location.path, f.location.line, f.location.column, f.message)
            for f in result.findings] == EXPECTED


def test_cli():
    res = run_cli("slurm-allexport", "--format", "json", "--select", "MLC403", "--no-cache", cwd=BASE)
    assert res.code == 1, res.err
    assert [(f["code"], f["path"], f["line"], f["column"], f["message"])
            for f in json.loads(res.out)["findings"]] == EXPECTED


def test_exported_vars_forms():
    text = ("A=1\nset -a\nB=2\nC=$(hostname)\nif true; then set +a; fi\nD=4\nset -e +a\nE=5\n"
            "set -o allexport\nF=6\nset +o allexport\nG=7\n")
    found = {name: (var.value, var.location.line) for name, var in exported_vars(text, "j.sbatch").items()}
    # set +a inside the if is not followed (top level only), so D is still exported.
    assert {k: v for k, v in found.items() if k != "C"} == {"B": ("2", 3), "D": ("4", 6), "F": ("6", 10)}
    assert found["C"] == (UNKNOWN, 4)
