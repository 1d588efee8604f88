"""Parameter count from a model id, and the training-memory floor per GPU
(rules.md "Memory estimate", used by MLC201c and MLC202).

Only sizes that the id states (``8B``, ``0.5B``, ``350M``, torchtune builder
names such as ``qwen2_5_0_5b``) or that a small table of well-known families
gives (``model_families.yaml``) are returned; anything else is ``None``, never
a guess.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from mlcost_lint.lean_dataclass import dataclass

__all__ = [
    "parameter_count",
    "estimate_training_memory_gib",
    "MemoryEstimate",
    "OPTIMIZERS",
    "LORA_TRAINABLE_FRACTION",
]

_GIB = float(1 << 30)

# A size token: digits (optionally with a "." or "_" decimal part) followed by
# B or M, standing alone between separators. Not K (context lengths: "4k",
# "128k") and not T (training tokens: "3T"). A letter right before the digits
# ("a3b" active parameters, "e2b" effective parameters, "v2") disqualifies it.
# "_" separates like "-" ("open_llama_3b_v2"), except in "1_6b", which
# stablelm-2-1_6b uses as a decimal point: that form is rewritten to "1.6b"
# first when a dash precedes it, and an id with a "<digit>_<digits>b" run left
# after that ("llama3_1_8b": 3.1 and 8B, or 1.8B?) is ambiguous -> None.
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)([bm])(?![a-z0-9])")
_DASH_UNDERSCORE_DECIMAL = re.compile(r"(?<=[-/])(\d+)_(\d+)([bm])(?![a-z0-9])")
_AMBIGUOUS_UNDERSCORE = re.compile(r"\d_\d+[bm](?![a-z0-9])")
# Mixture-of-experts naming: "8x7b" (experts x expert size) or an "16e" expert count.
_MOE_EXPERTS_X_SIZE = re.compile(r"(?<![a-z0-9.])(\d+)x(\d+(?:\.\d+)?)b(?![a-z0-9])")
_MOE_EXPERT_COUNT = re.compile(r"(?<![a-z0-9.])\d+e(?![a-z0-9])")
_UNITS = {"b": 1e9, "m": 1e6}
_TORCHTUNE = re.compile(r"^torchtune\.models\.([a-z0-9_]+)\.([a-z0-9_]+)$")


@dataclass(frozen=True)
class _FamilyTables:
    exact: dict[str, float]  # normalised last path segment prefix -> params
    moe: dict[str, float]  # normalised key -> total params (MoE, where names mislead)


def _norm(text: str) -> str:
    return text.strip().lower()


@cache
def _families() -> _FamilyTables:
    from mlcost_lint.yaml_lib import SAFE_LOADER, yaml  # lazy

    with open(Path(__file__).parent / "model_families.yaml", encoding="utf-8") as handle:
        data: Any = yaml.load(handle, Loader=SAFE_LOADER)
    return _FamilyTables(
        exact={_norm(k): float(v) for k, v in data["families"].items()},
        moe={_norm(k): float(v) for k, v in data["moe"].items()},
    )


def _family_lookup(segment: str, table: dict[str, float]) -> float | None:
    """Longest table key that equals the segment or prefixes it at a
    separator ("gpt2-xl" for "gpt2-xl-finetuned", not "gpt2")."""
    best: tuple[int, float] | None = None
    for key, params in table.items():
        if segment == key or (
            segment.startswith(key) and segment[len(key)] in "-_."
        ):
            if best is None or len(key) > best[0]:
                best = (len(key), params)
    return best[1] if best else None


def _torchtune_parts(model_id: str) -> tuple[str, str] | None:
    """``torchtune.models.qwen2_5.lora_qwen2_5_0_5b`` -> ("qwen2_5_0_5b", "0.5b"):
    the builder name without a LoRA/QLoRA prefix (for the family tables) and
    the part after the module's own name, "_" decimals turned into "." and the
    other underscores into "-" (for the size token). The module prefix must go
    first: in ``llama3_1_8b`` the "1_8" is the version 3.1, not 1.8B."""
    match = _TORCHTUNE.match(model_id)
    if not match:
        return None
    module, builder = match.groups()
    builder = re.sub(r"^q?lora_", "", builder)
    rest = builder[len(module) + 1 :] if builder.startswith(module + "_") else ""
    rest = re.sub(r"(?<![a-z0-9])(\d+)_(\d+)b(?![a-z0-9])", r"\1.\2b", rest)
    rest = re.sub(r"(?<![a-z0-9_])(\d+)_(\d+)b(?=_|$)", r"\1.\2b", rest)
    return builder, rest.replace("_", "-")


def parameter_count(model_id: str) -> float | None:
    """Total parameters of the model a training config names, or None.

    ``meta-llama/Meta-Llama-3.1-8B-Instruct`` -> 8e9, ``Qwen/Qwen2.5-0.5B`` ->
    5e8, ``facebook/opt-350m`` -> 3.5e8, ``gpt2-xl`` -> 1.5576e9 (table),
    ``mistralai/Mixtral-8x7B-v0.1`` -> 46.7e9 (MoE table), ``Qwen/Qwen3-30B-A3B``
    -> 30e9 (the total, which is what must fit in memory), torchtune
    ``torchtune.models.llama3_1.lora_llama3_1_8b`` -> 8e9. Unknown -> None.
    """
    if not isinstance(model_id, str):
        return None
    text = _norm(model_id)
    if not text or "${" in text or "{{" in text or "%(" in text:
        return None
    tables = _families()
    torchtune = _torchtune_parts(text)
    if torchtune is not None:
        lookup_name, sized = torchtune
    else:
        # Last path segment; an Ollama-style tag "llama3:70b" counts as a separator.
        lookup_name = text.rstrip("/").rsplit("/", 1)[-1]
        sized = lookup_name.replace(":", "-")

    # 1. Mixture-of-experts names, where the size token is misleading.
    moe = _family_lookup(lookup_name, tables.moe)
    if moe is not None:
        return moe
    if _MOE_EXPERTS_X_SIZE.search(sized) or _MOE_EXPERT_COUNT.search(sized):
        return None  # an MoE we do not know: "17b-16e" states the active size only

    # 2. Well-known families without a size token (and with misleading ones: t5-3b).
    family = _family_lookup(lookup_name, tables.exact)
    if family is not None:
        return family

    # 3. The first size token ("Qwen2.5-7B-Instruct-1M": 7B, not the 1M context).
    sized = _DASH_UNDERSCORE_DECIMAL.sub(r"\1.\2\3", "-" + sized)
    if _AMBIGUOUS_UNDERSCORE.search(sized):
        return None
    for match in _SIZE.finditer(sized):
        number = float(match.group(1))
        if number > 0:
            return number * _UNITS[match.group(2)]
    return None


# ------------------------------------------------------ memory estimate ---


@dataclass(frozen=True)
class MemoryEstimate:
    """Training-memory floor per GPU (activations not counted).

    ``bytes_per_param`` is the per-GPU figure after sharding, per parameter of
    the whole model; ``explain`` lists the inputs for the finding's message.
    """

    gib_per_gpu: float
    explain: str
    params: float
    bytes_per_param: float


# Full fine-tune, bytes per parameter, split into the parts that ZeRO stages
# shard: (weights, gradients, optimizer states).
#  mixed precision: 2 (bf16/fp16 weights) + 2 (grads) + 12 (fp32 master
#    weights 4 + Adam m 4 + v 4) = 16 (ZeRO paper, section 3.1).
#  fp32: 4 (weights) + 4 (grads) + 8 (Adam m + v) = 16; no master copy.
# (Transformers' AMP keeps fp32 weights and grads, 4 + 4 + 8: the same 16.)
_FULL_MIXED = (2.0, 2.0, 12.0)
_FULL_FP32 = (4.0, 4.0, 8.0)
# Optimizer states per parameter, (mixed precision, fp32), and how the
# explanation names them. 8-bit Adam (bitsandbytes adamw_8bit/PagedAdamW8bit)
# keeps m and v in one byte each; paged optimizers (paged_adamw*, PagedAdamW*)
# can evict m and v to host memory, so the floor keeps only the fp32 master.
OPTIMIZERS = {
    "adam": ((12.0, 8.0), "Adam"),
    "adam_8bit": ((6.0, 2.0), "8-bit Adam"),
    "paged_adam": ((4.0, 0.0), "paged Adam, states may be in host memory"),
    "paged_adam_8bit": ((4.0, 0.0), "paged 8-bit Adam, states may be in host memory"),
}
# LoRA: ~1% of the parameters are trainable adapters, trained at the
# full-fine-tune bytes/param; the frozen base weights sit at load precision.
LORA_TRAINABLE_FRACTION = 0.01
_LOAD_BYTES = {32: 4.0, 16: 2.0, 8: 1.0, 4: 0.5}


def _fmt_params(params: float) -> str:
    if params >= 1e9:
        return f"{params / 1e9:.1f}B"
    return f"{params / 1e6:.0f}M"


def _fmt_bytes(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text


def estimate_training_memory_gib(
    params: float,
    *,
    lora: bool,
    load_bits: int | None,
    mixed_precision: bool,
    zero_stage: int | None,
    fsdp: bool,
    data_parallel_ranks: int,
    optimizer: str = "adam",
    offload_optimizer: bool = False,
    offload_params: bool = False,
) -> MemoryEstimate:
    """Per-GPU memory floor of training ``params`` parameters.

    Full fine-tune with Adam: 16 bytes/param (see ``_FULL_MIXED``/``_FULL_FP32``).
    ZeRO-1 shards the optimizer states, ZeRO-2 also the gradients, ZeRO-3 and
    FSDP (treated as full sharding) everything, across ``data_parallel_ranks``
    (sharding needs more than one rank).
    LoRA: frozen weights at ``load_bits`` (32 -> 4 B, 16 -> 2 B, 8 -> 1 B,
    4 -> 0.5 B; None means 16-bit, the rules' figure) plus 1% trainable
    parameters at the full-fine-tune bytes/param; ZeRO-3/FSDP also shard the
    frozen weights.
    ``optimizer``: a key of :data:`OPTIMIZERS` ("adam", "adam_8bit",
    "paged_adam", "paged_adam_8bit"); an unknown name counts as "adam".
    ``offload_optimizer`` (DeepSpeed ``offload_optimizer.device: cpu|nvme``,
    FSDP CPU offload): optimizer states and gradients leave the GPU.
    ``offload_params`` (DeepSpeed ``offload_param``, FSDP CPU offload): the
    weights leave the GPU. Offloaded parts count 0: this is a floor.
    """
    ranks = max(int(data_parallel_ranks or 1), 1)
    stage = int(zero_stage) if zero_stage else 0
    if fsdp:
        stage = 3
    sharded = stage > 0 and ranks > 1
    bits = load_bits if load_bits in _LOAD_BYTES else 16
    (state_mixed, state_fp32), optimizer_label = OPTIMIZERS.get(optimizer, OPTIMIZERS["adam"])

    base_weights, base_grads, _ = _FULL_MIXED if mixed_precision else _FULL_FP32
    base_optim = state_mixed if mixed_precision else state_fp32
    if lora:
        frozen = _LOAD_BYTES[bits]
        weights = frozen + base_weights * LORA_TRAINABLE_FRACTION
        grads = base_grads * LORA_TRAINABLE_FRACTION
        optim = base_optim * LORA_TRAINABLE_FRACTION
        trainable = base_weights + base_grads + base_optim
        what = (
            f"LoRA: frozen weights {_fmt_bytes(frozen)} B/param ({bits}-bit) + "
            f"{LORA_TRAINABLE_FRACTION:.0%} trainable at {_fmt_bytes(trainable)} B/param, "
            f"{optimizer_label}"
        )
    else:
        weights, grads, optim = base_weights, base_grads, base_optim
        what = (
            "full fine-tune, " + ("mixed precision" if mixed_precision else "fp32")
            + f", {optimizer_label}"
        )
    if offload_optimizer:
        grads, optim = 0.0, 0.0
        what += ", optimizer states and gradients offloaded"
    if offload_params:
        weights = 0.0
        what += ", weights offloaded"

    total = weights + grads + optim
    if not sharded:
        per_param = total
        formula = f"{_fmt_params(params)} params x {_fmt_bytes(total)} B/param ({what})"
        if stage > 0:
            formula += f" on 1 rank ({'FSDP' if fsdp else f'ZeRO-{stage}'} shards nothing)"
    else:
        label = "FSDP" if fsdp else f"ZeRO-{stage}"
        if stage >= 3:
            kept, split = 0.0, total
        elif stage == 2:
            kept, split = weights, grads + optim
        else:
            kept, split = weights + grads, optim
        per_param = kept + split / ranks
        if kept == 0:
            formula = (
                f"{_fmt_params(params)} params x {_fmt_bytes(total)} B/param ({what}) "
                f"/ {ranks} ranks ({label})"
            )
        else:
            formula = (
                f"{_fmt_params(params)} params x ({_fmt_bytes(kept)} B/param replicated + "
                f"{_fmt_bytes(split)} B/param / {ranks} ranks ({label})) ({what})"
            )
    gib = params * per_param / _GIB
    explain = f"{formula} = {gib:.1f} GiB per GPU, activations not counted"
    return MemoryEstimate(gib_per_gpu=gib, explain=explain, params=params, bytes_per_param=per_param)
