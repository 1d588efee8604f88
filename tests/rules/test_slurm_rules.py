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


DEMO_SLURM = [
    ('MLC101', 'infra/pcluster-config.yaml', 2, 'ParallelCluster config pcluster-config.yaml lacks cost tags team, project, cost-center (required-tags); its spend cannot be attributed; add them to Tags (as - Key: k / Value: v items; ParallelCluster tags every resource it creates with them)'),
    ('MLC203', 'infra/pcluster-config.yaml', 26, 'ParallelCluster compute resource SlurmQueues[p5].p5-48xl keeps 1 x p5.48xlarge = 8 H100-80 GPUs running with no job (MinCount = 1); set MinCount: 0 (Slurm power-saving starts nodes when jobs are queued and stops them after ScaledownIdletime)'),
    ('MLC204', 'slurm/pretrain-llama.sbatch', 2, "Slurm job llama-8b-pretrain holds 16 GPUs (#SBATCH --gres=gpu:8, line 6) with no #SBATCH --time: the partition's default limit applies (Slurm's default is UNLIMITED); a hung run keeps them until someone notices: add #SBATCH --time=HH:MM:SS above the expected run time"),
    ('MLC208', 'slurm/pretrain-llama.sbatch', 3, 'Slurm job llama-8b-pretrain runs 8 GPUs per node on on-demand capacity (#SBATCH --partition=p5 = ParallelCluster queue p5 (SlurmQueues[p5].p5-48xl) -> ParallelCluster compute resource SlurmQueues[p5].p5-48xl, on-demand: CapacityType = ONDEMAND) and checkpoints to durable storage (output_dir: s3://acme-llm-checkpoints/runs/llama8b-full-ft): it can resume after preemption, so spot capacity at 60-90% lower price would fit'),
    ('MLC502', 'slurm/pretrain-llama.sbatch', 3, 'Slurm job llama-8b-pretrain trains across nodes (torchrun on 2 nodes) on p5.48xlarge (#SBATCH --partition=p5, line 3), which supports EFA, but ParallelCluster SlurmQueues[p5].p5-48xl does not set Efa.Enabled: true: NCCL falls back to TCP and every step waits on the network; set Efa.Enabled: true on the compute resource'),
    ('MLC201', 'slurm/pretrain-llama.sbatch', 6, 'Slurm job llama-8b-pretrain requests 8 GPUs per node (#SBATCH --gres=gpu:8, line 6) but starts srun (1 task per node) torchrun --nproc_per_node=$GPUS_PER_NODE (GPUS_PER_NODE=4 set in the script) (slurm/pretrain-llama.sbatch:20): 4 GPUs per node idle; request 4 or start 8 ranks per node'),
    ('MLC202', 'slurm/pretrain-llama.sbatch', 6, 'Slurm job llama-8b-pretrain trains meta-llama/Llama-3.1-8B-Instruct on H100-80 GPUs of p5.48xlarge (80 GiB per GPU; GPU type from node group/pool SlurmQueues[p5].p5-48xl) but the memory floor is 8.0B params x 16 B/param (full fine-tune, mixed precision, Adam) = 119.2 GiB per GPU, activations not counted: it will run out of memory; shard with ZeRO-3/FSDP, use LoRA, or choose a larger GPU'),
    ('MLC702', 'slurm/pretrain-llama.sbatch', 6, 'Slurm job llama-8b-pretrain requests 16 GPUs over all nodes (nodes 2 x 8), above max-gpus-per-job 8; split the job or lower its nodes or GPUs per node'),
    ('MLC403', 'slurm/pretrain-llama.sbatch', 13, 'NCCL_DEBUG=INFO exported in Slurm job llama-8b-pretrain (8 GPUs per node: #SBATCH --gres=gpu:8 on line 6): NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it'),
    ('MLC403', 'slurm/pretrain-llama.sbatch', 14, 'CUDA_LAUNCH_BLOCKING=1 exported in Slurm job llama-8b-pretrain (8 GPUs per node: #SBATCH --gres=gpu:8 on line 6): every CUDA kernel launch waits for the kernel to finish; remove it'),
]


def test_demo_slurm_and_parallelcluster_part():
    """The demo's Slurm job and ParallelCluster config, through the real CLI
    with the demo's config: the job links to the p5 queue (GPU type, capacity,
    EFA), so the rules that need the node type fire on it too."""
    import json

    from mlc_testing import run_cli

    res = run_cli(".", "--format", "json", "--no-cache", cwd=FIXTURES / "demo")
    assert res.code == 1, res.err
    found = [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(res.out)["findings"]
             if f["path"].startswith(("slurm/", "infra/pcluster"))]
    assert found == DEMO_SLURM
