"""Parameter counts from model ids, and the training-memory arithmetic."""

from __future__ import annotations

import pytest

from mlcost_lint.catalogue import MemoryEstimate, estimate_training_memory_gib, parameter_count

GIB = float(1 << 30)

# Real ids from /work/shared/corpus (base_model, model_name_or_path, model
# name, torchtune _component_) with the count the name or the family table gives.
CORPUS_IDS = [
    ("meta-llama/Llama-3.2-1B", 1e9),
    ("meta-llama/Llama-3.1-8B", 8e9),
    ("meta-llama/Meta-Llama-3-8B-Instruct", 8e9),
    ("NousResearch/Meta-Llama-3.1-8B", 8e9),
    ("NousResearch/Llama-2-7b-hf", 7e9),
    ("Qwen/Qwen3-8B", 8e9),
    ("Qwen/Qwen2.5-0.5B", 0.5e9),
    ("Qwen/Qwen2.5-1.5B-Instruct", 1.5e9),
    ("Qwen/Qwen2.5-72B", 72e9),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", 30e9),  # total, not the 3B active
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", 80e9),
    ("Qwen/Qwen1.5-MoE-A2.7B", 14.3e9),
    ("mistralai/Mistral-7B-v0.1", 7e9),
    ("mistralai/Mixtral-8x7B-v0.1", 46.7e9),
    ("mistral-community/Mixtral-8x22B-v0.1", 140.6e9),
    ("mistralai/Magistral-Small-2506", 23.6e9),
    ("mistralai/Ministral-3-3B-Reasoning-2512", 3e9),
    ("axolotl-ai-co/Mistral-Small-4-119B-2603-BF16", 119e9),
    ("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16", 109e9),
    ("openai/gpt-oss-20b", 20.9e9),
    ("axolotl-ai-co/gpt-oss-120b-dequantized", 116.8e9),
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", 1.1e9),
    ("TinyLlama/TinyLlama_v1.1", 1.1e9),
    ("HuggingFaceTB/SmolLM2-135M", 135e6),
    ("google/gemma-3-270m-it", 270e6),
    ("google/gemma-3-12b-it", 12e9),
    ("microsoft/phi-1_5", 1.42e9),
    ("microsoft/phi-2", 2.78e9),
    ("microsoft/Phi-3-mini-4k-instruct", 3.82e9),  # "4k" is the context length
    ("stabilityai/stablelm-2-1_6b", 1.6e9),
    ("openlm-research/open_llama_3b_v2", 3e9),
    ("tiiuae/Falcon-H1-1.5B-Deep-Base", 1.5e9),
    ("EleutherAI/pythia-1.4b-deduped", 1.4e9),
    ("codellama/CodeLlama-34b-hf", 34e9),
    ("hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16", 405e9),
    ("LnL-AI/dbrx-base-converted-v2", 132e9),
    ("ai21labs/Jamba-v0.1", 51.6e9),
    ("./llama-7b-hf", 7e9),
    # torchtune model components
    ("torchtune.models.llama3_1.lora_llama3_1_8b", 8e9),
    ("torchtune.models.llama3_1.qlora_llama3_1_405b", 405e9),
    ("torchtune.models.llama3_2.llama3_2_1b", 1e9),
    ("torchtune.models.llama3_2_vision.llama3_2_vision_11b", 11e9),
    ("torchtune.models.llama3_3.llama3_3_70b", 70e9),
    ("torchtune.models.qwen2_5.lora_qwen2_5_0_5b", 0.5e9),
    ("torchtune.models.qwen2_5.qwen2_5_1_5b_instruct", 1.5e9),
    ("torchtune.models.qwen2.qwen2_1_5b", 1.5e9),
    ("torchtune.models.qwen3.qwen3_0_6b_instruct", 0.6e9),
    ("torchtune.models.qwen3.lora_qwen3_1_7b_instruct", 1.7e9),
    ("torchtune.models.phi3.phi3_mini", 3.82e9),
    ("torchtune.models.phi4.phi4_14b", 14e9),
    ("torchtune.models.gemma2.qlora_gemma2_27b", 27e9),
    ("torchtune.models.llama4.llama4_scout_17b_16e", 109e9),
    ("torchtune.models.mistral.mistral_7b", 7e9),
]


@pytest.mark.parametrize("model_id,expected", CORPUS_IDS)
def test_corpus_model_ids(model_id, expected):
    assert parameter_count(model_id) == pytest.approx(expected)


@pytest.mark.parametrize(
    "model_id,expected",
    [
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", 8e9),
        ("70b", 70e9),
        ("facebook/opt-350m", 350e6),
        ("Qwen/Qwen2.5-1.5B", 1.5e9),
        ("gpt2", 124.4e6),
        ("openai-community/gpt2-medium", 354.8e6),
        ("gpt2-large", 774.0e6),
        ("gpt2-xl", 1557.6e6),
        ("bert-base-uncased", 109.5e6),
        ("google-bert/bert-large-uncased-whole-word-masking", 335.1e6),
        ("roberta-base", 124.6e6),
        ("FacebookAI/roberta-large", 355.4e6),
        ("distilbert-base-uncased", 66.4e6),
        ("t5-small", 60.5e6),
        ("google-t5/t5-3b", 2.85e9),  # the table, not the rounded "3b"
        ("google/flan-t5-xl", 2.85e9),
        ("xlm-roberta-base", 278.0e6),
        ("llama3:70b", 70e9),  # Ollama tag
        ("Qwen/Qwen2.5-7B-Instruct-1M", 7e9),  # 1M context, first token wins
        ("TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T", 1.1e9),
    ],
)
def test_size_tokens_and_family_table(model_id, expected):
    assert parameter_count(model_id) == pytest.approx(expected)


@pytest.mark.parametrize(
    "model_id",
    [
        "my-org/custom-model",
        "username/custom_model_name",
        "zai-org/GLM-4.7-Flash",  # no size in the name
        "PaddlePaddle/PaddleOCR-VL-1.6",  # a version, not a size
        "mistralai/Mistral-Nemo-Instruct-2407",  # a date
        "google/gemma-3n-E2B-it",  # "effective" size, not the parameter count
        "CohereForAI/c4ai-command-r7b-12-2024",
        "deepseek-ai/DeepSeek-V2-Lite",
        "some/Llama-5-Giant-17B-64E",  # an MoE we do not know: 17B is only the active size
        "org/Foo-4x3B",  # experts x size, unknown total
        "x/llama3_1_8b",  # 1.8B or 3.1-8B: ambiguous
        "torchtune.models.llama2.llama2",
        "torchtune.models.llama3_2_vision.llama3_2_vision_transform",
        "torch.optim.AdamW",
        "${MODEL_NAME}",
        "{{ .Values.model }}",
        "./output/checkpoint-500",
        "v2",
        "",
    ],
)
def test_unknown_ids_are_none(model_id):
    assert parameter_count(model_id) is None


def test_non_string_is_none():
    assert parameter_count(None) is None  # type: ignore[arg-type]
    assert parameter_count(8) is None  # type: ignore[arg-type]


# ------------------------------------------------------------ memory


def estimate(params: float, **kwargs) -> MemoryEstimate:
    settings = dict(lora=False, load_bits=None, mixed_precision=True, zero_stage=None, fsdp=False,
                    data_parallel_ranks=1)
    settings.update(kwargs)
    return estimate_training_memory_gib(params, **settings)


def test_full_finetune_mixed_precision_is_16_bytes_per_param():
    est = estimate(8e9)
    assert est.bytes_per_param == 16
    assert est.gib_per_gpu == pytest.approx(8e9 * 16 / GIB)  # 119.2 GiB
    assert est.explain == (
        "8.0B params x 16 B/param (full fine-tune, mixed precision, Adam) "
        "= 119.2 GiB per GPU, activations not counted"
    )


def test_zero3_shards_everything():
    est = estimate(8e9, zero_stage=3, data_parallel_ranks=8)
    assert est.gib_per_gpu == pytest.approx(8e9 * 2 / GIB)
    assert est.explain == (
        "8.0B params x 16 B/param (full fine-tune, mixed precision, Adam) / 8 ranks (ZeRO-3) "
        "= 14.9 GiB per GPU, activations not counted"
    )


def test_fsdp_counts_as_full_sharding():
    est = estimate(8e9, fsdp=True, data_parallel_ranks=4)
    assert est.bytes_per_param == 4
    assert "/ 4 ranks (FSDP)" in est.explain


def test_zero1_shards_optimizer_states_only():
    est = estimate(8e9, zero_stage=1, data_parallel_ranks=8)
    assert est.bytes_per_param == pytest.approx(4 + 12 / 8)
    assert est.gib_per_gpu == pytest.approx(8e9 * 5.5 / GIB)
    assert "(4 B/param replicated + 12 B/param / 8 ranks (ZeRO-1))" in est.explain


def test_zero2_also_shards_gradients():
    est = estimate(8e9, zero_stage=2, data_parallel_ranks=8)
    assert est.bytes_per_param == pytest.approx(2 + 14 / 8)


def test_zero_on_one_rank_shards_nothing():
    est = estimate(1e9, zero_stage=3, data_parallel_ranks=1)
    assert est.bytes_per_param == 16
    assert "shards nothing" in est.explain


def test_fp32_without_mixed_precision():
    est = estimate(1e9, mixed_precision=False)
    assert est.bytes_per_param == 16  # 4 weights + 4 grads + 8 Adam moments
    assert "fp32" in est.explain
    sharded = estimate(1e9, mixed_precision=False, zero_stage=1, data_parallel_ranks=4)
    assert sharded.bytes_per_param == pytest.approx(8 + 8 / 4)


@pytest.mark.parametrize("bits,frozen", [(None, 2.0), (16, 2.0), (8, 1.0), (4, 0.5), (32, 4.0)])
def test_lora_frozen_weights_at_load_precision_plus_trainable_part(bits, frozen):
    est = estimate(7e9, lora=True, load_bits=bits)
    assert est.bytes_per_param == pytest.approx(frozen + 0.16)
    assert est.gib_per_gpu == pytest.approx(7e9 * (frozen + 0.16) / GIB)


def test_qlora_explain():
    est = estimate(8e9, lora=True, load_bits=4)
    assert est.explain == (
        "8.0B params x 0.66 B/param (LoRA: frozen weights 0.5 B/param (4-bit) + 1% trainable "
        "at 16 B/param, Adam) = 4.9 GiB per GPU, activations not counted"
    )


def test_lora_with_zero3_shards_frozen_weights_too():
    est = estimate(70e9, lora=True, load_bits=16, zero_stage=3, data_parallel_ranks=8)
    assert est.bytes_per_param == pytest.approx(2.16 / 8)


def test_small_model_formatting_and_bad_ranks():
    est = estimate(350e6, data_parallel_ranks=0)
    assert est.explain.startswith("350M params x 16 B/param")
    assert est.gib_per_gpu == pytest.approx(350e6 * 16 / GIB)


def test_eight_bit_and_paged_optimizers():
    assert estimate(1e9, optimizer="adam_8bit").bytes_per_param == 2 + 2 + 6
    assert estimate(1e9, optimizer="adam_8bit", mixed_precision=False).bytes_per_param == 4 + 4 + 2
    assert estimate(1e9, optimizer="paged_adam_8bit").bytes_per_param == 2 + 2 + 4
    assert "8-bit Adam" in estimate(1e9, optimizer="adam_8bit").explain
    assert estimate(1e9, optimizer="something-else").bytes_per_param == 16  # unknown -> Adam
    qlora_8bit = estimate(8e9, lora=True, load_bits=4, optimizer="paged_adam_8bit")
    assert qlora_8bit.bytes_per_param == pytest.approx(0.5 + 0.01 * (2 + 2 + 4))


def test_offload_removes_parts_from_the_gpu():
    opt = estimate(70e9, zero_stage=3, data_parallel_ranks=8, offload_optimizer=True)
    assert opt.bytes_per_param == pytest.approx(2 / 8)
    assert "offloaded" in opt.explain
    both = estimate(70e9, zero_stage=3, data_parallel_ranks=8, offload_optimizer=True, offload_params=True)
    assert both.bytes_per_param == 0 and both.gib_per_gpu == 0
    z2 = estimate(7e9, zero_stage=2, data_parallel_ranks=4, offload_optimizer=True)
    assert z2.bytes_per_param == pytest.approx(2.0)


def test_vit_table():
    assert parameter_count("google/vit-base-patch16-224") == pytest.approx(86.6e6)


# ------------------------------------------------------- corpus sweep

import re  # noqa: E402
from pathlib import Path  # noqa: E402

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
_MODEL_KEY = re.compile(
    r"(?:base_model|model_name_or_path|pretrained_model_name_or_path|model_name|_component_)"
    r"\s*[:=]\s*['\"]?([A-Za-z0-9_./:-]+)"
)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_every_corpus_model_id_resolves_or_is_none_without_raising():
    ids = set()
    for path in CORPUS.rglob("*"):
        if path.suffix in {".yaml", ".yml", ".json"} and path.is_file():
            ids.update(_MODEL_KEY.findall(path.read_text(encoding="utf-8", errors="replace")))
    model_ids = {i for i in ids if not i.startswith(("torchtune.datasets", "torchtune.training",
                                                      "torchtune.modules", "torch."))}
    counts = {i: parameter_count(i) for i in model_ids}
    known = [c for c in counts.values() if c is not None]
    assert len(model_ids) > 150
    assert len(known) > 150
    # Every count is a plausible model size: 10M to 2T parameters.
    assert all(1e7 <= c <= 2e12 for c in known)
