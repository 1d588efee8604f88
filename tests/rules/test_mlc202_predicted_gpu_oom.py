"""MLC202 predicted-gpu-oom: every fixture case, exact code, path, line and message; negatives silent;
once through the real CLI."""

from __future__ import annotations

import pytest

from mlc_testing import FIXTURES, cli_json_findings, fixture_case_names, lint_dir, triples

CODE = "MLC202"
BASE = FIXTURES / "rules" / CODE

EXPECTED = {
    'positive/full_70b_on_l4': [
        ('MLC202', 'positive/full_70b_on_l4/k8s/job.yaml', 17, 'Job llama70b-sft trains meta-llama/Llama-3.1-70B on L4 GPUs of g6.48xlarge (24 GiB per GPU; GPU type from node labels node.kubernetes.io/instance-type=g6.48xlarge) but the memory floor is 70.0B params x 16 B/param (full fine-tune, mixed precision, Adam) / 8 ranks (ZeRO-3) = 130.4 GiB per GPU, activations not counted: it will run out of memory; shard with ZeRO-3/FSDP, use LoRA, or choose a larger GPU'),
    ],
    'positive/gke_l4': [
        ('MLC202', 'positive/gke_l4/k8s/job.yaml', 17, 'Job llama8b-sft trains meta-llama/Llama-3.1-8B on L4 GPUs (24 GiB per GPU; GPU type from node labels cloud.google.com/gke-accelerator=nvidia-l4) but the memory floor is 8.0B params x 16 B/param (full fine-tune, mixed precision, Adam) = 119.2 GiB per GPU, activations not counted: it will run out of memory; shard with ZeRO-3/FSDP, use LoRA, or choose a larger GPU'),
    ],
    'negative/qlora_fits': [
    ],
    'negative/unknown_gpu_or_model': [
    ],
    'negative/zero3_sharded_fits': [
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
