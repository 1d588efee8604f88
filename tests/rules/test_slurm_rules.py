"""Slurm batch scripts feed the existing GPU rules (issue 13): MLC201(a)
ranks per node vs GPUs per node, MLC204 no --time, MLC403 exported debug
variables. Exact findings on fixtures/rules/<CODE>/slurm/positive, none on
the negatives, suppressions in shell comments, and the real CLI."""

from __future__ import annotations

import pytest

from mlc_testing import FIXTURES, cli_json_findings, lint_dir, triples

EXPECTED = {
    "MLC201": [
        ("MLC201", "positive/slurm/srun_python.sbatch", 5,
         "Slurm job bert-pretrain requests 8 GPUs per node (#SBATCH --gpus-per-node=a100:8, line 5) but starts "
         "srun (4 tasks per node) python pretrain.py (positive/slurm/srun_python.sbatch:10): 4 GPUs per node idle; "
         "request 4 or start 8 ranks per node"),
        ("MLC201", "positive/slurm/train_multinode.slurm", 6,
         "Slurm job llama-sft requests 8 GPUs per node (#SBATCH --gres=gpu:8, line 6) but starts srun (1 task "
         "per node) torchrun --nproc_per_node=$GPUS_PER_NODE (GPUS_PER_NODE=4 set in the script) "
         "(positive/slurm/train_multinode.slurm:19): 4 GPUs per node idle; request 4 or start 8 ranks per node"),
    ],
    "MLC204": [
        ("MLC204", "positive/no_time.slurm", 2,
         "Slurm job open_r1 holds 32 GPUs (#SBATCH --gres=gpu:8, line 6) with no #SBATCH --time: the "
         "partition's default limit applies (Slurm's default is UNLIMITED); a hung run keeps them until "
         "someone notices: add #SBATCH --time=HH:MM:SS above the expected run time"),
        ("MLC204", "positive/unlimited.sbatch", 5,
         "Slurm job nccl-tests holds 16 GPUs (#SBATCH --gpus-per-node=8, line 4) with #SBATCH -t UNLIMITED "
         "(line 5): no time limit; a hung run keeps them until someone notices: add #SBATCH --time=HH:MM:SS "
         "above the expected run time"),
    ],
    "MLC403": [
        ("MLC403", "positive/debug_exports.slurm", 10,
         "CUDA_LAUNCH_BLOCKING=1 exported in Slurm job tr11-176B-ml (8 GPUs per node: #SBATCH --gres=gpu:8 on "
         "line 5): every CUDA kernel launch waits for the kernel to finish; remove it"),
        ("MLC403", "positive/debug_exports.slurm", 11,
         "NCCL_DEBUG=info exported in Slurm job tr11-176B-ml (8 GPUs per node: #SBATCH --gres=gpu:8 on line 5): "
         "NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it"),
        ("MLC403", "positive/debug_exports.slurm", 13,
         "TORCH_DISTRIBUTED_DEBUG=DETAIL exported in Slurm job tr11-176B-ml (8 GPUs per node: #SBATCH "
         "--gres=gpu:8 on line 5): torch.distributed adds checks and logging to collectives (DETAIL: a "
         "consistency check per collective); remove it (or set OFF)"),
    ],
}
COLUMNS = {"MLC201": [9, 9], "MLC204": [1, 9], "MLC403": [8, 8, 8]}


def _dirs(code: str):
    """(cwd, positive folder, negative folder): MLC201's fixtures are one
    folder per case (positive/slurm, negative/slurm), the others' one file per case."""
    base = FIXTURES / "rules" / code
    if code == "MLC201":
        return base, base / "positive" / "slurm", base / "negative" / "slurm"
    return base / "slurm", base / "slurm" / "positive", base / "slurm" / "negative"


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_positive_exact(code):
    cwd, positive, _ = _dirs(code)
    result = lint_dir(positive, cwd=cwd)
    assert triples(result, code) == EXPECTED[code]
    assert [f.location.column for f in result.findings if f.code == code] == COLUMNS[code]


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_negative_silent(code):
    cwd, _, negative = _dirs(code)
    result = lint_dir(negative, cwd=cwd)
    assert triples(result, code) == []
    # The negatives are read as Slurm jobs (silence is not a skipped file).
    assert all(pf.slurm is not None and not pf.errors for pf in result.files)


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_cli_json(code):
    cwd, positive, _ = _dirs(code)
    res, found = cli_json_findings(str(positive.relative_to(cwd)), code, cwd)
    assert res.code == 1, res.err
    assert found == EXPECTED[code]


def test_only_the_rules_that_apply_fire_on_slurm_positives():
    """A Slurm job has no pod labels nor pod /dev/shm: MLC102 and MLC603 stay
    silent even with required tags set."""
    codes = set()
    for code in EXPECTED:
        cwd, positive, _ = _dirs(code)
        result = lint_dir(positive, cwd=cwd, required_tags=["team"])
        codes |= {f.code for f in result.findings}
    assert codes == {"MLC201", "MLC204", "MLC403"}


def test_suppressions_in_shell_comments():
    cwd, _, negative = _dirs("MLC204")
    result = lint_dir(negative, cwd=cwd)
    assert sorted((f.code, f.location.path, f.location.line) for f in result.suppressed) == [
        ("MLC204", "negative/suppressed.slurm", 3),
        ("MLC204", "negative/suppressed_inline.sbatch", 3),
    ]
    assert [f.code for f in result.findings if f.code == "MLC002"] == []


def test_late_directive_is_ignored():
    """#SBATCH after the first command is a comment to sbatch: the job asks
    for 4 GPUs, not 8, and torchrun's 4 ranks match."""
    result = lint_dir(_dirs("MLC201")[2] / "late_directive.slurm")
    job = result.project.kubernetes.workloads[0]
    assert (job.batch.gpus_per_node, job.batch.gpus.location.line) == (4, 3)
    launch = result.project.links.launches_of(job.templates[0].containers[0])
    assert [(x.launcher, x.ranks_per_node) for x in launch] == [("torchrun", 4)]


def test_bigscience_launcher_in_bash_c_is_unknown():
    result = lint_dir(_dirs("MLC201")[2] / "bigscience_launcher.slurm")
    job = result.project.kubernetes.workloads[0]
    launches = result.project.links.launches_of(job.templates[0].containers[0])
    assert [(x.launcher, x.ranks_per_node, x.unknown_reason) for x in launches] == [
        ("srun", launches[0].ranks_per_node, "srun runs a shell command or script that is not read")]
    from mlcost_lint.model.core import UNKNOWN

    assert launches[0].ranks_per_node is UNKNOWN


def test_bare_python_after_an_unread_gpu_program_is_unknown():
    """open-r1's evaluate.slurm: lighteval (vLLM over 8 GPUs) then a python
    upload script; the python is not the job's rank count."""
    result = lint_dir(_dirs("MLC201")[2] / "eval_then_upload.slurm")
    job = result.project.kubernetes.workloads[0]
    launches = result.project.links.launches_of(job.templates[0].containers[0])
    assert [(x.launcher, x.unknown_reason) for x in launches] == [
        ("python", "the script also runs lighteval, which may be what uses the GPUs")]
