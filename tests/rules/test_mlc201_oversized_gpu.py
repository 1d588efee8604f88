"""MLC201 oversized-gpu: every fixture case, exact code, path, line and message; negatives silent;
once through the real CLI."""

from __future__ import annotations

import pytest

from mlc_testing import FIXTURES, cli_json_findings, fixture_case_names, lint_dir, triples

CODE = "MLC201"
BASE = FIXTURES / "rules" / CODE

EXPECTED = {
    'positive/accelerate_config': [
        ('MLC201', 'positive/accelerate_config/k8s/job.yaml', 21, 'Job mistral-dpo requests 8 x nvidia.com/gpu but starts accelerate launch --config_file /app/recipes/accelerate/multi_gpu.yaml (num_processes: 4) (positive/accelerate_config/recipes/accelerate/multi_gpu.yaml:10): 4 GPUs idle; request 4 or start 8 ranks'),
    ],
    'positive/cpu_config': [
        ('MLC201', 'positive/cpu_config/k8s/volcano.yaml', 20, 'Job bert-finetune trainer requests 1 x nvidia.com/gpu but runs on CPU (use_cpu in the linked config, positive/cpu_config/configs/glue.yaml:6): the GPU stays idle; remove the GPU request or the CPU setting'),
    ],
    'positive/slurm': [
        ('MLC201', 'positive/slurm/srun_python.sbatch', 5, 'Slurm job bert-pretrain requests 8 GPUs per node (#SBATCH --gpus-per-node=a100:8, line 5) but starts srun (4 tasks per node) python pretrain.py (positive/slurm/srun_python.sbatch:10): 4 GPUs per node idle; request 4 or start 8 ranks per node'),
        ('MLC201', 'positive/slurm/train_multinode.slurm', 6, 'Slurm job llama-sft requests 8 GPUs per node (#SBATCH --gres=gpu:8, line 6) but starts srun (1 task per node) torchrun --nproc_per_node=$GPUS_PER_NODE (GPUS_PER_NODE=4 set in the script) (positive/slurm/train_multinode.slurm:19): 4 GPUs per node idle; request 4 or start 8 ranks per node'),
    ],
    'negative/slurm': [],
    'positive/idle_ranks': [
        ('MLC201', 'positive/idle_ranks/k8s/pytorchjob.yaml', 23, 'PyTorchJob llama-sft requests 8 x nvidia.com/gpu per Worker but starts torchrun --nproc_per_node=2 (positive/idle_ranks/k8s/pytorchjob.yaml:20): 6 GPUs idle; request 2 or start 8 ranks'),
    ],
    'positive/nccl_tests': [
        ('MLC201', 'positive/nccl_tests/job.yaml', 13, 'Job nccl-test-idle requests 4 x nvidia.com/gpu but starts mpirun -np 1 all_gather_perf -g 2 (positive/nccl_tests/job.yaml:12): 2 GPUs idle; request 2 or start 4 ranks'),
    ],
    'positive/notebooks': [
        ('MLC201', 'positive/notebooks/notebooks.tf', 4, 'SageMaker notebook instance aws_sagemaker_notebook_instance.research uses ml.p3.8xlarge with 4 x V100-16: an interactive notebook sits idle most of the day and bills all 4 GPUs; use a 1-GPU type and run multi-GPU work as training jobs'),
        ('MLC201', 'positive/notebooks/notebooks.tf', 13, 'Vertex AI Workbench instance google_workbench_instance.explore uses 4 x NVIDIA_TESLA_T4 with 4 x T4: an interactive notebook sits idle most of the day and bills all 4 GPUs; use a 1-GPU type and run multi-GPU work as training jobs'),
    ],
    'positive/ranks_off_command_line': [
        ('MLC201', 'positive/ranks_off_command_line/jobs.yaml', 22, 'PyTorchJob mistral-pretrain requests 8 x nvidia.com/gpu per Worker but starts torchrun (no --nproc_per_node: PET_NPROC_PER_NODE from nprocPerNode: 4) (positive/ranks_off_command_line/jobs.yaml:9): 4 GPUs idle; request 4 or start 8 ranks'),
        ('MLC201', 'positive/ranks_off_command_line/jobs.yaml', 43, 'Job vit-finetune requests 4 x nvidia.com/gpu but starts torchrun (no --nproc_per_node: PET_NPROC_PER_NODE=2 in the container env) (positive/ranks_off_command_line/jobs.yaml:38): 2 GPUs idle; request 2 or start 4 ranks'),
    ],
    'positive/serving_engine': [
        ('MLC201', 'positive/serving_engine/vllm.yaml', 24, 'Deployment vllm-gemma requests 2 x nvidia.com/gpu but starts python3 -m vllm.entrypoints.openai.api_server --tensor-parallel-size=1 (positive/serving_engine/vllm.yaml:20): 1 GPU idle; request 1 or start 2 ranks'),
    ],
    'positive/small_model': [
        ('MLC201', 'positive/small_model/k8s/job.yaml', 17, 'Job qwen-sft-small trains Qwen/Qwen2.5-0.5B on 8 x H100-80 GPUs of p5.48xlarge (80 GiB each; GPU type from node group/pool aws_eks_node_group.h100): the memory estimate (500M params x 16 B/param (full fine-tune, mixed precision, Adam) = 7.5 GiB per GPU, activations not counted) fills 9% of each GPU (under 25%); a GPU with at most half the memory fits, e.g. p4d.24xlarge (A100-40, 40 GiB)'),
    ],
    'negative/cpu_only': [
    ],
    'negative/equal_ranks': [
    ],
    'negative/nccl_tests_gpus_per_rank': [
    ],
    'negative/notebook_one_gpu': [
    ],
    'negative/nproc_variable': [
    ],
    'negative/ray_python': [
    ],
    'negative/serving_engine_parallel': [
    ],
    'negative/unknown_model_and_type': [
    ],
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_fixture(case):
    result = lint_dir(BASE / case, cwd=BASE)
    assert triples(result, CODE) == EXPECTED[case]
    assert result.project.links.errors == []


def test_every_fixture_case_is_listed():
    assert fixture_case_names(BASE) == sorted(EXPECTED)


def test_cli_json():
    case = next(c for c in sorted(EXPECTED) if c.startswith("positive/"))
    res, got = cli_json_findings(case, CODE, BASE)
    assert res.code == 1, res.err
    assert got == EXPECTED[case]


def _related(case):
    result = lint_dir(BASE / case, cwd=BASE)
    return [[(r.location.path, r.location.line, r.message) for r in f.related]
            for f in result.findings if f.code == CODE]


def test_related_says_what_the_rank_evidence_is():
    """Launch.ranks_what names the place the rank count is written (it used to
    be labelled "num_processes in the Accelerate config" whatever it was)."""
    assert _related('positive/ranks_off_command_line') == [
        [('positive/ranks_off_command_line/jobs.yaml', 19,
          'torchrun (no --nproc_per_node: PET_NPROC_PER_NODE from nprocPerNode: 4): 4 ranks per pod'),
         ('positive/ranks_off_command_line/jobs.yaml', 9,
          'nprocPerNode in the PyTorchJob spec (the operator passes it as PET_NPROC_PER_NODE)')],
        [('positive/ranks_off_command_line/jobs.yaml', 40,
          'torchrun (no --nproc_per_node: PET_NPROC_PER_NODE=2 in the container env): 2 ranks per pod'),
         ('positive/ranks_off_command_line/jobs.yaml', 38, 'PET_NPROC_PER_NODE in the container env')],
    ]
    assert _related('positive/accelerate_config') == [
        [('positive/accelerate_config/k8s/job.yaml', 17,
          'accelerate launch --config_file /app/recipes/accelerate/multi_gpu.yaml (num_processes: 4): 4 ranks per pod'),
         ('positive/accelerate_config/recipes/accelerate/multi_gpu.yaml', 10, 'num_processes in the Accelerate config')],
    ]
    assert _related('positive/idle_ranks') == [
        [('positive/idle_ranks/k8s/pytorchjob.yaml', 20, 'torchrun --nproc_per_node=2: 2 ranks per pod')],
    ]
