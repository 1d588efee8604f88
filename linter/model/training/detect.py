"""Which framework a YAML/JSON document configures, decided by its content.

Precision over recall: a document is a training config only when keys that
belong to one framework's vocabulary are present together (one generic key
such as ``learning_rate`` or ``trainer`` is never enough). Kubernetes
manifests, GitHub workflows and docker-compose files are refused first.
Each detector returns the reason it matched, kept as
``TrainingConfig.detection_reason``.

Order matters where vocabularies overlap: Accelerate and DeepSpeed have
distinctive keys; torchtune's ``_component_`` blocks are unique; Axolotl
also accepts Trainer keys, so it is tried before Transformers; NeMo shares
Lightning's ``trainer:`` block and is told apart by ``exp_manager`` or a
Hydra ``defaults`` list.
"""

from __future__ import annotations

from typing import Any, Callable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.training import Framework, TrainingConfig, TrainingSettings
from mlcost_lint.model.training._values import ConfigView
from mlcost_lint.model.training.common import apply_defaults, collect_data_paths
from mlcost_lint.parse.document import Document, KeyPath

# --- vocabularies --------------------------------------------------------

# TrainingArguments keys that only a Trainer config writes (generic words
# like learning_rate, seed, output_dir, max_steps are deliberately absent).
TRAINER_KEYS = frozenset({
    "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
    "num_train_epochs", "save_strategy", "save_steps", "save_total_limit", "eval_strategy",
    "evaluation_strategy", "eval_steps", "logging_strategy", "logging_steps", "logging_first_step",
    "lr_scheduler_type", "warmup_ratio", "hub_strategy", "push_to_hub", "hub_model_id",
    "dataloader_num_workers", "dataloader_pin_memory", "gradient_checkpointing", "report_to",
    "bf16", "fp16", "tf32", "overwrite_output_dir", "do_train", "do_eval", "log_level",
    "log_level_replica", "optim", "use_cpu", "no_cuda", "load_best_model_at_end",
    "metric_for_best_model", "remove_unused_columns", "ddp_find_unused_parameters",
    "torch_compile", "save_only_model", "eval_accumulation_steps", "logging_dir", "run_name",
    "gradient_checkpointing_kwargs", "lr_scheduler_kwargs", "include_tokens_per_second",
    "deepspeed", "fsdp", "fsdp_config",
})
# Keys of TRL's *Config / ScriptArguments / ModelConfig and alignment-handbook
# recipes that plain TrainingArguments does not have.
TRL_KEYS = frozenset({
    "dataset_mixture", "dataset_mixer", "dataset_text_field", "packing", "use_peft",
    "num_generations", "max_prompt_length", "max_completion_length", "beta",
    "completion_only_loss", "assistant_only_loss", "use_vllm", "vllm_mode", "reward_funcs",
    "dataset_train_split", "dataset_test_split", "padding_free", "max_seq_length",
    "dataset_num_proc", "loss_type", "lora_target_modules", "lora_task_type", "use_liger_kernel",
})
# Script/model arguments that accompany Trainer keys in recipe files.
MODEL_ARG_KEYS = frozenset({"model_name_or_path", "dataset_name", "torch_dtype", "model_revision",
                            "attn_implementation"})
AXOLOTL_KEYS = frozenset({
    "datasets", "micro_batch_size", "sequence_len", "adapter", "num_epochs", "pretraining_dataset",
    "sample_packing", "rl", "dataset_prepared_path", "base_model_config", "tokenizer_type",
    "model_type", "val_set_size", "lora_target_linear", "lora_r", "load_in_8bit", "load_in_4bit",
    "special_tokens", "flash_attention", "plugins", "saves_per_epoch", "evals_per_epoch",
    "pad_to_sequence_len", "eval_sample_packing", "chat_template",
})
LIGHTNING_TRAINER_KEYS = frozenset({
    "accelerator", "strategy", "devices", "num_nodes", "precision", "logger", "callbacks",
    "fast_dev_run", "max_epochs", "min_epochs", "max_steps", "min_steps", "max_time",
    "limit_train_batches", "limit_val_batches", "limit_test_batches", "limit_predict_batches",
    "overfit_batches", "val_check_interval", "check_val_every_n_epoch", "num_sanity_val_steps",
    "log_every_n_steps", "enable_checkpointing", "enable_progress_bar", "enable_model_summary",
    "accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm", "deterministic",
    "benchmark", "inference_mode", "use_distributed_sampler", "profiler", "detect_anomaly",
    "barebones", "plugins", "sync_batchnorm", "reload_dataloaders_every_n_epochs",
    "default_root_dir", "replace_sampler_ddp", "gpus", "auto_select_gpus", "amp_backend",
})
ACCELERATE_DISTRIBUTED_TYPES = frozenset({
    "NO", "MULTI_GPU", "MULTI_CPU", "MULTI_XPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA",
    "MULTI_MUSA", "MULTI_HPU", "MULTI_NEURON", "DEEPSPEED", "FSDP", "XLA", "TPU", "MEGATRON_LM",
    "DATA_PARALLEL", "MODEL_PARALLEL",
})
ACCELERATE_COMPUTE_ENVIRONMENTS = frozenset({"LOCAL_MACHINE", "AMAZON_SAGEMAKER"})
DEEPSPEED_COMPANION_KEYS = frozenset({
    "fp16", "bf16", "optimizer", "scheduler", "gradient_clipping", "steps_per_print",
    "wall_clock_breakdown", "zero_allow_untested_optimizer", "gradient_accumulation_steps",
})
# Keys that show a torchtune config trains (evaluation, generation and
# quantization recipes share the _component_ blocks but do not train).
TORCHTUNE_TRAINING_KEYS = frozenset({"optimizer", "loss", "epochs", "max_steps_per_epoch"})


@dataclass(frozen=True, slots=True)
class Detection:
    framework: Framework
    reason: str
    flavour: str = ""


# A detector's verdict that the document is not a training config at all
# (stops the detectors after it from trying).
NOT_TRAINING = "not-training"

Detector = Callable[[dict], "Detection | str | None"]


def _keys(root: dict, vocabulary: frozenset) -> list[str]:
    return sorted(k for k in root if isinstance(k, str) and k in vocabulary)


def _not_ours(root: dict) -> str | None:
    """Documents that are certainly something else."""
    if "apiVersion" in root and "kind" in root:
        return "Kubernetes object"
    if "jobs" in root and ("on" in root or True in root):  # YAML 1.1 reads `on:` as True
        return "GitHub workflow"
    if isinstance(root.get("services"), dict) and ("version" in root or "volumes" in root
                                                   or "networks" in root or len(root) <= 3):
        return "docker-compose file"
    return None


def _accelerate(root: dict) -> Detection | None:
    dist = root.get("distributed_type")
    if isinstance(dist, str) and dist.strip().upper() in ACCELERATE_DISTRIBUTED_TYPES:
        return Detection(Framework.ACCELERATE, f"distributed_type: {dist.strip()} (Accelerate config)")
    env = root.get("compute_environment")
    if isinstance(env, str) and env.strip().upper() in ACCELERATE_COMPUTE_ENVIRONMENTS:
        return Detection(Framework.ACCELERATE, f"compute_environment: {env.strip()} (Accelerate config)")
    return None


def _deepspeed(root: dict) -> Detection | None:
    if "base_model" in root or "distributed_type" in root:
        return None
    if isinstance(root.get("zero_optimization"), dict):
        return Detection(Framework.DEEPSPEED, "zero_optimization block (DeepSpeed config)")
    if "train_micro_batch_size_per_gpu" in root:
        return Detection(Framework.DEEPSPEED, "train_micro_batch_size_per_gpu (DeepSpeed config)")
    companions = _keys(root, DEEPSPEED_COMPANION_KEYS)
    if "train_batch_size" in root and companions and (
            isinstance(root.get("fp16"), dict) or isinstance(root.get("bf16"), dict)
            or "steps_per_print" in root or "wall_clock_breakdown" in root):
        return Detection(Framework.DEEPSPEED, f"train_batch_size with {', '.join(companions)} (DeepSpeed config)")
    return None


def _torchtune(root: dict) -> Detection | str | None:
    components = sorted(
        k for k, v in root.items()
        if isinstance(k, str) and isinstance(v, dict)
        and isinstance(v.get("_component_"), str) and v["_component_"].startswith("torchtune.")
    )
    if not components:
        return None
    training = _keys(root, TORCHTUNE_TRAINING_KEYS)
    nested = root.get("training")  # async RL recipes nest the trainer
    if not training and isinstance(nested, dict):
        training = [f"training.{k}" for k in _keys(nested, TORCHTUNE_TRAINING_KEYS)]
    if not training:
        # An evaluation / generation / quantization recipe: torchtune, but not
        # training, and not anything else either.
        return NOT_TRAINING
    return Detection(Framework.TORCHTUNE,
                     f"torchtune _component_ blocks ({', '.join(components[:3])}) with {', '.join(training)}")


def _axolotl(root: dict) -> Detection | None:
    if not isinstance(root.get("base_model"), str):
        return None
    own = _keys(root, AXOLOTL_KEYS)
    if not own:
        return None
    return Detection(Framework.AXOLOTL, f"base_model with Axolotl keys ({', '.join(own[:4])})")


def _lightning_trainer_keys(root: dict) -> list[str]:
    trainer = root.get("trainer")
    return _keys(trainer, LIGHTNING_TRAINER_KEYS) if isinstance(trainer, dict) else []


def _hydra_defaults(root: dict) -> bool:
    return isinstance(root.get("defaults"), list)


def _nemo(root: dict) -> Detection | None:
    trainer_keys = _lightning_trainer_keys(root)
    if not trainer_keys:
        return None
    flavour = "hydra" if _hydra_defaults(root) else ""
    if isinstance(root.get("exp_manager"), dict):
        return Detection(Framework.NEMO, f"trainer ({', '.join(trainer_keys[:3])}) with exp_manager (NeMo)", flavour)
    target = root["trainer"].get("_target_")
    if isinstance(target, str) and "lightning" in target.lower() and target.endswith("Trainer"):
        return Detection(Framework.NEMO, f"trainer._target_: {target} (Hydra-instantiated Lightning Trainer)", flavour)
    if flavour:
        return Detection(Framework.NEMO, f"trainer ({', '.join(trainer_keys[:3])}) with a Hydra defaults list", flavour)
    return None


def _lightning(root: dict) -> Detection | None:
    for block in ("model", "data"):
        node = root.get(block)
        if isinstance(node, dict) and isinstance(node.get("class_path"), str):
            return Detection(Framework.LIGHTNING, f"{block}.class_path (LightningCLI config)")
    trainer_keys = _lightning_trainer_keys(root)
    if len(trainer_keys) >= 2:
        return Detection(Framework.LIGHTNING, f"trainer with Lightning Trainer keys ({', '.join(trainer_keys[:4])})")
    return None


def _transformers(root: dict) -> Detection | None:
    trainer = _keys(root, TRAINER_KEYS)
    trl = _keys(root, TRL_KEYS)
    model_args = _keys(root, MODEL_ARG_KEYS)
    if not trainer:
        return None
    if len(trainer) + len(trl) + len(model_args) < 2:
        return None
    # Which dataclass parses the file is not written in it. TRL's configs
    # change some TrainingArguments defaults (bf16, logging_steps), so only a
    # file with keys that exist in TRL and not in TrainingArguments is read
    # with TRL's. Model/script arguments (model_name_or_path, dataset_name)
    # are no evidence for TRL: the Transformers example scripts take them too.
    # With model/script arguments and no TRL-only key the parser is not known
    # (TRL CLI or a Transformers example script): the "script" dialect leaves
    # the defaults that differ unknown. Plain Trainer keys are TrainingArguments.
    if trl:
        return Detection(Framework.TRANSFORMERS,
                         f"Trainer arguments ({', '.join(trainer[:3])}) with TRL keys ({', '.join(trl[:3])})",
                         "trl")
    if model_args:
        return Detection(Framework.TRANSFORMERS,
                         f"Trainer arguments ({', '.join(trainer[:3])}) with script arguments "
                         f"({', '.join(model_args[:3])}): TRL CLI or Transformers script", "script")
    return Detection(Framework.TRANSFORMERS, f"Trainer arguments ({', '.join(trainer[:4])})")


DETECTORS: tuple[Detector, ...] = (
    _accelerate, _deepspeed, _torchtune, _axolotl, _nemo, _lightning, _transformers,
)


def detect(root: Any) -> Detection | None:
    if not isinstance(root, dict) or not root or _not_ours(root):
        return None
    for detector in DETECTORS:
        found = detector(root)
        if isinstance(found, Detection):
            return found
        if found == NOT_TRAINING:
            return None
    return None


# --- reading -----------------------------------------------------------------

def _reader(framework: Framework) -> Callable[[ConfigView, TrainingSettings, str], None]:
    from mlcost_lint.model.training import (
        accelerate, axolotl, deepspeed, lightning, nemo, torchtune, transformers,
    )
    return {
        Framework.TRANSFORMERS: transformers.read,
        Framework.AXOLOTL: axolotl.read,
        Framework.DEEPSPEED: deepspeed.read,
        Framework.ACCELERATE: accelerate.read,
        Framework.LIGHTNING: lightning.read,
        Framework.TORCHTUNE: torchtune.read,
        Framework.NEMO: nemo.read,
    }[framework]


def read_training_config(document: Document, key_path: KeyPath = ()) -> TrainingConfig | None:
    """Detect and normalise one parsed document (or the part of it at
    ``key_path``). None when it is not a training config. Never raises."""
    try:
        return _read(document, tuple(key_path))
    except Exception:  # a reader bug must not stop the scan; the document is skipped
        return None


def _read(document: Document, key_path: KeyPath) -> TrainingConfig | None:
    view = ConfigView(document, key_path)
    found = detect(view.data)
    if found is None:
        return None
    settings = TrainingSettings()
    _reader(found.framework)(view, settings, found.flavour)
    collect_data_paths(view, settings)
    apply_defaults(settings, found.framework.value, found.flavour)
    return TrainingConfig(
        path=document.path, framework=found.framework, detection_reason=found.reason,
        document=document, key_path=key_path, settings=settings, flavour=found.flavour,
    )


def read_embedded_configs(text: str, path: str, base_line: int, embedded_in: str, embedded_key: str,
                          base_column: int = 1) -> list[TrainingConfig]:
    """Training configs held in a ConfigMap data value.

    ``base_line`` is the manifest line of the value's first line (for a ``|``
    block scalar, the line after the key); ``base_column`` the column its
    text starts at (the block's indentation + 1), so locations point into
    the manifest. Read with the ConfigMap's file (model.build.read_file_model)
    and cached with it. Never raises; text that does not parse is no config."""
    try:
        return _read_embedded(text, path, base_line, embedded_in, embedded_key, base_column)
    except Exception:
        return []


def _parse_text(text: str, path: str, as_json: bool) -> list[Document] | None:
    """The documents of ``text`` in JSON (one) or YAML, None when it is not valid."""
    from mlcost_lint.parse.yamljson import DocumentError, parse_json, parse_yaml

    try:
        return [parse_json(text, path)] if as_json else parse_yaml(text, path)
    except DocumentError:
        return None


def _read_embedded(text: str, path: str, base_line: int, embedded_in: str, embedded_key: str,
                   base_column: int) -> list[TrainingConfig]:
    if not isinstance(text, str) or not text.strip():
        return []
    line_shift = max(int(base_line), 1) - 1
    col_shift = max(int(base_column), 1) - 1
    documents: list[Document] = []
    looks_json = embedded_key.lower().endswith(".json") or text.lstrip().startswith(("{", "["))
    if looks_json:
        documents = _parse_text(text, path, True) or []
    if not documents:
        documents = _parse_text(text, path, False)
        if documents is None:
            return []
    configs: list[TrainingConfig] = []
    for doc in documents:
        shifted = Document(
            path=path, index=doc.index, data=doc.data,
            positions={k: (line + line_shift, col + col_shift) for k, (line, col) in doc.positions.items()},
            start_line=doc.start_line + line_shift, end_line=doc.end_line + line_shift,
        )
        config = read_training_config(shifted)
        if config is not None:
            config.embedded_in = embedded_in
            config.embedded_key = embedded_key
            configs.append(config)
    return configs
