"""A monorepo holding copies of one platform lints each copy as it does alone.

Copies repeat project-root-relative config paths (``deepspeed:
configs/ds.json``) and ConfigMap names; a reference that matches one file
per copy goes to the copy of the file that writes it (link/nearest.py).
Before that, MLC601 was lost in every copy: the DeepSpeed partner of a
config was "ambiguous", so its precision was unknown and the rule stayed
silent.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from mlc_testing import run_cli

ACCELERATE = """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: configs/ds_zero.json
mixed_precision: 'no'
num_machines: 1
num_processes: 8
"""
DEEPSPEED = '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": 1}\n'
CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: train-config
  namespace: ml
data:
  train.yaml: |
    model_name_or_path: Qwen/Qwen2.5-7B
    output_dir: /checkpoints/sft
    deepspeed: configs/ds_zero.json
    bf16: false
    per_device_train_batch_size: 4
    save_total_limit: 2
"""

ALONE = [
    ("MLC601", "configs/accelerate.yaml", 5,
     "accelerate config trains in full fp32 on GPU: mixed_precision: no; set mixed_precision: bf16 "
     "(mixed_precision: fp16 on T4/V100 and older GPUs)"),
    ("MLC601", "k8s/train-configmap.yaml", 11,
     "transformers config in ConfigMap/ml/train-config key train.yaml trains in full fp32 on GPU: bf16 and fp16 "
     "are false; set bf16: true (fp16: true on T4/V100 and older GPUs)"),
]


def _platform(root: Path) -> None:
    for name, text in {"configs/accelerate.yaml": ACCELERATE, "configs/ds_zero.json": DEEPSPEED,
                       "k8s/train-configmap.yaml": CONFIG_MAP}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / ".git").mkdir(exist_ok=True)


def _findings(cwd: Path) -> list[tuple[str, str, int, str]]:
    res = run_cli(".", "--format", "json", "--select", "MLC601", "--no-cache", cwd=cwd)
    assert res.code in (0, 1), res.err
    return sorted((f["code"], f["path"], f["line"], f["message"]) for f in json.loads(res.out)["findings"])


def test_each_copy_lints_as_it_does_alone(tmp_path):
    alone = tmp_path / "alone"
    _platform(alone)
    assert _findings(alone) == ALONE

    mono = tmp_path / "mono"
    for copy in ("east", "west"):
        shutil.copytree(alone, mono / copy, ignore=shutil.ignore_patterns(".git"))
    (mono / ".git").mkdir()
    found = _findings(mono)
    for copy in ("east", "west"):
        mine = [(c, p[len(copy) + 1:], line, re.sub(rf"\b{copy}/", "", m)) for c, p, line, m in found
                if p.startswith(copy + "/")]
        assert mine == ALONE, copy
    assert len(found) == 2 * len(ALONE)
