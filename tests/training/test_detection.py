"""Detection by content: positives, negatives, and the real corpus."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from mlcost_lint.model.training import Framework, read_training_config
from mlcost_lint.parse.yamljson import DocumentError, parse_json, parse_yaml

from .helpers import CORPUS, FIXTURES, read_file, read_text

FIXTURE_FRAMEWORKS = {
    "trl_sft_recipe.yaml": Framework.TRANSFORMERS,
    "trainer_args_defaults.yaml": Framework.TRANSFORMERS,
    "trainer_args_explicit.json": Framework.TRANSFORMERS,
    "axolotl_lora.yml": Framework.AXOLOTL,
    "axolotl_defaults.yml": Framework.AXOLOTL,
    "ds_zero3_profiled.json": Framework.DEEPSPEED,
    "ds_auto.json": Framework.DEEPSPEED,
    "ds_minimal.json": Framework.DEEPSPEED,
    "accelerate_fsdp_debug.yaml": Framework.ACCELERATE,
    "accelerate_deepspeed_file.yaml": Framework.ACCELERATE,
    "accelerate_cpu.yaml": Framework.ACCELERATE,
    "lightning_cli.yaml": Framework.LIGHTNING,
    "lightning_cli_defaults.yaml": Framework.LIGHTNING,
    "lightning_cpu_barebones.yaml": Framework.LIGHTNING,
    "torchtune_lora.yaml": Framework.TORCHTUNE,
    "torchtune_full_defaults.yaml": Framework.TORCHTUNE,
    "nemo_gpt_pretrain.yaml": Framework.NEMO,
    "nemo_hydra_composed.yaml": Framework.NEMO,
}


@pytest.mark.parametrize("name", sorted(FIXTURE_FRAMEWORKS))
def test_fixture_framework(name):
    cfg = read_file(FIXTURES / name)
    assert cfg is not None and cfg.framework is FIXTURE_FRAMEWORKS[name]
    assert cfg.detection_reason


def test_every_fixture_is_listed():
    on_disk = {p.name for p in FIXTURES.iterdir() if p.suffix in (".yaml", ".yml", ".json")}
    assert on_disk - {p for p in on_disk if p.startswith("not_")} == set(FIXTURE_FRAMEWORKS)


NEGATIVES = {
    "kubernetes": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n"
                  "    spec:\n      containers:\n      - name: t\n        image: x\n"
                  "        args: [--per_device_train_batch_size, '4']\n",
    "k8s with training-looking keys": "apiVersion: v1\nkind: ConfigMap\nlogging_steps: 1\nsave_steps: 1\n",
    "github workflow": "name: ci\non:\n  push: {}\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
                       "    steps:\n    - run: pytest\n",
    "docker compose": "services:\n  trainer:\n    image: acme/train\n    environment:\n"
                      "      - LOGGING_STEPS=1\nvolumes:\n  data: {}\n",
    "helm values": "replicaCount: 1\nimage:\n  repository: acme/trainer\n  tag: v1\nresources:\n"
                   "  limits:\n    nvidia.com/gpu: 1\ntrainer:\n  enabled: true\n  schedule: '@daily'\n",
    "hydra app": "hydra:\n  job:\n    chdir: true\nlearning_rate: 0.1\nbatch_size: 32\nseed: 1\n",
    "hydra instantiate trainer": "trainer:\n  _target_: my_app.Trainer\n  optimizer:\n    _target_: my_app.Opt\n",
    "generic hyperparameters": "learning_rate: 0.001\nbatch_size: 64\nepochs: 10\noutput_dir: out\n",
    "one trainer key only": "logging_steps: 10\nname: my-service\n",
    "base_model alone": "base_model: gpt2\n",
    "torchtune generation recipe": "model:\n  _component_: torchtune.models.llama3.llama3_8b\n"
                                   "checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n"
                                   "device: cuda\ndtype: bf16\nprompt: hello\n",
    "mkdocs": "site_name: docs\nnav:\n  - index.md\ntheme:\n  name: material\n",
    "lightning trainer with one key": "trainer:\n  max_epochs: 3\n",
}


@pytest.mark.parametrize("name", sorted(NEGATIVES))
def test_not_a_training_config(name):
    assert read_text(NEGATIVES[name]) is None


def test_detection_reasons_name_the_evidence():
    assert read_file(FIXTURES / "ds_minimal.json").detection_reason == \
        "train_micro_batch_size_per_gpu (DeepSpeed config)"
    assert read_file(FIXTURES / "accelerate_cpu.yaml").detection_reason == \
        "distributed_type: NO (Accelerate config)"
    assert read_file(FIXTURES / "nemo_gpt_pretrain.yaml").detection_reason == \
        "trainer (accelerator, devices, enable_checkpointing) with exp_manager (NeMo)"


def test_config_inside_a_document_at_key_path():
    docs = parse_yaml("wrapper:\n  training:\n    per_device_train_batch_size: 4\n    logging_steps: 1\n",
                      "w.yaml")
    cfg = read_training_config(docs[0], ("wrapper", "training"))
    assert cfg is not None and cfg.framework is Framework.TRANSFORMERS
    assert cfg.key_path == ("wrapper", "training")
    assert cfg.settings.logging_steps.location.line == 4
    assert cfg.location.line == 2
    assert read_training_config(docs[0]) is None


# --- the corpus: every training config of these frameworks, nothing else ---

def _expected(rel: str) -> Framework | None:
    top = rel.split("/", 1)[0]
    name = rel.rsplit("/", 1)[-1]
    if top == "axolotl-ai-cloud__axolotl":
        if rel.endswith(".json"):
            return Framework.DEEPSPEED
        return None if "/examples/cloud/" in rel else Framework.AXOLOTL
    if top == "huggingface__accelerate":
        return Framework.DEEPSPEED if rel.endswith(".json") else Framework.ACCELERATE
    if top == "huggingface__trl":
        return Framework.TRANSFORMERS if "cli_configs" in rel else Framework.ACCELERATE
    if top == "microsoft__torchgeo":
        return Framework.LIGHTNING
    if top == "pytorch__torchtune":
        if "/tests/" in rel or any(w in name for w in ("evaluation", "generation", "quantization")):
            return None
        return Framework.TORCHTUNE
    return None  # Kubernetes manifests, Hydra app configs


def _corpus_documents():
    for dirpath, _dirs, files in os.walk(CORPUS):
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml", ".json")):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(CORPUS).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            try:
                docs = [parse_json(text, rel)] if name.endswith(".json") else parse_yaml(text, rel)
            except DocumentError:
                continue
            for doc in docs:
                yield rel, doc


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_corpus_detection_exact():
    counts: Counter = Counter()
    wrong = []
    for rel, doc in _corpus_documents():
        cfg = read_training_config(doc)
        got = cfg.framework if cfg else None
        counts[got.value if got else "none"] += 1
        if got is not _expected(rel):
            wrong.append((rel, doc.index, got, _expected(rel)))
    assert wrong == []
    assert counts == Counter({"axolotl": 257, "torchtune": 179, "lightning": 126, "accelerate": 35,
                              "deepspeed": 18, "transformers": 1, "none": 287})


def test_defaults_doc_matches_the_table():
    from mlcost_lint.model.training.defaults import defaults_markdown
    from .helpers import ROOT
    doc = (ROOT / "docs" / "framework-defaults.md").read_text(encoding="utf-8")
    start = doc.index("<!-- BEGIN GENERATED")
    body = doc[doc.index("\n", start) + 1:doc.index("<!-- END GENERATED -->")]
    assert body == defaults_markdown()
