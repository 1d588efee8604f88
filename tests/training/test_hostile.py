"""Wrong shapes anywhere never raise out of the readers."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcost_lint.model.training import read_embedded_configs, read_training_config
from mlcost_lint.model.training.detect import (
    AXOLOTL_KEYS, LIGHTNING_TRAINER_KEYS, TRAINER_KEYS, TRL_KEYS, _read,
)
from mlcost_lint.parse.document import Document
from mlcost_lint.parse.yamljson import parse_json, parse_yaml

from .helpers import read_text

# Keys the readers look at, so that random documents reach them.
KEYS = sorted(TRAINER_KEYS | TRL_KEYS | AXOLOTL_KEYS | LIGHTNING_TRAINER_KEYS | {
    "base_model", "distributed_type", "compute_environment", "mixed_precision", "use_cpu",
    "num_processes", "num_machines", "deepspeed_config", "zero_optimization", "stage",
    "train_micro_batch_size_per_gpu", "train_batch_size", "enabled", "flops_profiler",
    "comms_logger", "wall_clock_breakdown", "steps_per_print", "trainer", "model", "data",
    "class_path", "init_args", "exp_manager", "checkpoint_callback_params", "save_top_k",
    "every_n_train_steps", "_component_", "dtype", "device", "profiler", "epochs", "optimizer",
    "defaults", "adapter", "save_total_limit", "deepspeed", "fsdp", "debug", "training",
})
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**20, max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
        ["auto", "NaN", "${x}", "", "no", "bf16", "MULTI_GPU", "torchtune.models.x.lora_y", "-1",
         "s3://b/k", "ModelCheckpoint", "lightning.pytorch.Trainer", "1e400", "∞"]),
    st.text(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(KEYS), children, max_size=6)),
    max_leaves=30,
)
ROOTS = st.one_of(VALUES, st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=10))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROOTS)
def test_random_documents_never_raise(data):
    doc = Document(path="x.yaml", index=0, data=data, positions={})
    # The unguarded reader: read_training_config would hide a reader bug.
    cfg = _read(doc, ())
    assert (cfg is None) == (read_training_config(doc) is None)
    if cfg is not None:
        cfg.location  # noqa: B018 - must resolve too
        for name in cfg.settings.__slots__:
            getattr(cfg.settings, name)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=-5, max_value=10**6))
def test_random_embedded_text_never_raises(text, line):
    assert isinstance(read_embedded_configs(text, "cm.yaml", line, "ConfigMap/x", "k.yaml"), list)


def test_wrong_types_everywhere():
    hostile = [
        "per_device_train_batch_size: [1]\nsave_steps: {a: 1}\nsave_total_limit: [x]\nbf16: [true]\n"
        "logging_steps: .nan\nreport_to: {a: b}\ndeepspeed: 7\nuse_cpu: maybe\nmax_steps: 1e400\n",
        "base_model: gpt2\ndatasets: 5\nadapter: [lora]\nbf16: {x: 1}\nsave_total_limit: .inf\n"
        "saves_per_epoch: [1]\nfsdp_config: 1\n",
        "distributed_type: FSDP\nnum_processes: -3\nmixed_precision: [bf16]\ndeepspeed_config: 5\nuse_cpu: 2\n",
        '{"zero_optimization": [], "train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": [1]}, '
        '"flops_profiler": 5, "steps_per_print": 99999999999999999999999999}',
        "trainer:\n  precision: [16]\n  accelerator: 5\n  callbacks: {class_path: ModelCheckpoint, init_args: 3}\n"
        "  log_every_n_steps: x\nmodel:\n  class_path: 5\ndata:\n  class_path: X\n  init_args: [1]\n",
        "trainer:\n  precision: 16\n  callbacks:\n  - 5\n  - class_path: a.ModelCheckpoint\n    init_args:\n"
        "      save_top_k: -7\n      every_n_train_steps: x\n  max_epochs: 1\n",
        "model:\n  _component_: torchtune.models.x\noptimizer: 5\ndtype: [bf16]\ndevice: {a: 1}\n"
        "profiler: [1]\nlog_every_n_steps: -1\n",
        "trainer:\n  devices: 1\n  precision: 5.5\nexp_manager: {checkpoint_callback_params: [1]}\n"
        "model: {peft: {peft_scheme: 5}, train_ds: 7}\n",
    ]
    for text in hostile:
        doc = (parse_json(text, "h.json") if text.startswith("{") else parse_yaml(text, "h.yaml")[0])
        cfg = _read(doc, ())  # unguarded: a reader exception fails the test
        assert cfg is not None, text
        assert read_text(text, "h.json" if text.startswith("{") else "h.yaml") is not None
