"""Accelerator catalogue: exact figures per family, name forms, labels, unknowns."""

from __future__ import annotations

import pytest

from mlcost_lint.catalogue import (
    Accelerator,
    GpuModel,
    all_accelerators,
    from_node_labels,
    gcp_accelerator,
    gpu_model,
    gpu_model_matches,
    instance_type,
    smaller_gpu_same_cloud,
)


# name, cloud, gpu model, memory GiB, count, vcpus, rdma, bf16
REPRESENTATIVE = [
    ("p3.2xlarge", "aws", "V100-16", 16, 1, 8, False, False),
    ("p3dn.24xlarge", "aws", "V100-32", 32, 8, 96, False, False),
    ("p4d.24xlarge", "aws", "A100-40", 40, 8, 96, True, True),
    ("p4de.24xlarge", "aws", "A100-80", 80, 8, 96, True, True),
    ("p5.48xlarge", "aws", "H100-80", 80, 8, 192, True, True),
    ("p5e.48xlarge", "aws", "H200", 141, 8, 192, True, True),
    ("p5en.48xlarge", "aws", "H200", 141, 8, 192, True, True),
    ("p5.4xlarge", "aws", "H100-80", 80, 1, 16, True, True),
    ("p6-b200.48xlarge", "aws", "B200", 179, 8, 192, True, True),
    ("p6-b300.48xlarge", "aws", "B300", 268, 8, 192, True, True),
    ("p6e-gb200.36xlarge", "aws", "GB200", 185, 4, 144, True, True),
    ("g4dn.xlarge", "aws", "T4", 16, 1, 4, False, False),
    ("g4dn.12xlarge", "aws", "T4", 16, 4, 48, False, False),
    ("g4ad.16xlarge", "aws", "Radeon-Pro-V520", 8, 4, 64, False, False),
    ("g5.xlarge", "aws", "A10G", 24, 1, 4, False, True),
    ("g5.48xlarge", "aws", "A10G", 24, 8, 192, False, True),
    ("g5g.16xlarge", "aws", "T4G", 16, 2, 64, False, False),
    ("g6.12xlarge", "aws", "L4", 24, 4, 48, False, True),
    ("gr6.4xlarge", "aws", "L4", 24, 1, 16, False, True),
    ("g6e.48xlarge", "aws", "L40S", 48, 8, 192, False, True),
    ("dl1.24xlarge", "aws", "Gaudi", 32, 8, 96, False, True),
    ("trn1.2xlarge", "aws", "Trainium", 32, 1, 8, False, True),
    ("trn1.32xlarge", "aws", "Trainium", 32, 16, 128, False, True),
    ("trn1n.32xlarge", "aws", "Trainium", 32, 16, 128, True, True),
    ("trn2.48xlarge", "aws", "Trainium2", 96, 16, 192, True, True),
    ("inf1.24xlarge", "aws", "Inferentia", 8, 16, 96, False, True),
    ("inf2.48xlarge", "aws", "Inferentia2", 32, 12, 192, False, True),
    ("a2-highgpu-1g", "gcp", "A100-40", 40, 1, 12, False, True),
    ("a2-megagpu-16g", "gcp", "A100-40", 40, 16, 96, False, True),
    ("a2-ultragpu-8g", "gcp", "A100-80", 80, 8, 96, False, True),
    ("a3-highgpu-8g", "gcp", "H100-80", 80, 8, 208, True, True),
    ("a3-highgpu-4g", "gcp", "H100-80", 80, 4, 104, False, True),
    ("a3-megagpu-8g", "gcp", "H100-80", 80, 8, 208, True, True),
    ("a3-edgegpu-8g", "gcp", "H100-80", 80, 8, 208, False, True),
    ("a3-ultragpu-8g", "gcp", "H200", 141, 8, 224, True, True),
    ("a4-highgpu-8g", "gcp", "B200", 179, 8, 224, True, True),
    ("g2-standard-4", "gcp", "L4", 24, 1, 4, False, True),
    ("g2-standard-24", "gcp", "L4", 24, 2, 24, False, True),
    ("g2-standard-96", "gcp", "L4", 24, 8, 96, False, True),
    ("ct5lp-hightpu-4t", "gcp", "TPU-v5e", 16, 4, 112, False, True),
    ("Standard_NC6s_v3", "azure", "V100-16", 16, 1, 6, False, False),
    ("Standard_NC24rs_v3", "azure", "V100-16", 16, 4, 24, True, False),
    ("Standard_NC4as_T4_v3", "azure", "T4", 16, 1, 4, False, False),
    ("Standard_NC24ads_A100_v4", "azure", "A100-80", 80, 1, 24, False, True),
    ("Standard_NC40ads_H100_v5", "azure", "H100-NVL", 94, 1, 40, False, True),
    ("Standard_ND40rs_v2", "azure", "V100-32", 32, 8, 40, True, False),
    ("Standard_ND96asr_v4", "azure", "A100-40", 40, 8, 96, True, True),
    ("Standard_ND96amsr_A100_v4", "azure", "A100-80", 80, 8, 96, True, True),
    ("Standard_ND96isr_H100_v5", "azure", "H100-80", 80, 8, 96, True, True),
    ("Standard_ND96isr_H200_v5", "azure", "H200", 141, 8, 96, True, True),
    ("Standard_ND96isr_MI300X_v5", "azure", "MI300X", 192, 8, 96, True, True),
    ("Standard_NV12s_v3", "azure", "M60", 8, 1, 12, False, False),
    ("Standard_NV36ads_A10_v5", "azure", "A10", 24, 1, 36, False, True),
]


@pytest.mark.parametrize("name,cloud,model,memory,count,vcpus,rdma,bf16", REPRESENTATIVE)
def test_representative_entries(name, cloud, model, memory, count, vcpus, rdma, bf16):
    entry = instance_type(name)
    assert isinstance(entry, Accelerator)
    assert entry.cloud == cloud
    assert entry.name == name
    assert entry.gpu.name == model
    assert entry.gpu.memory_gib == memory
    assert entry.count == count
    assert entry.vcpus == vcpus
    assert entry.rdma is rdma
    assert entry.gpu.bf16 is bf16
    assert entry.source


def test_aws_efa_is_separate_from_rdma():
    assert instance_type("g5.48xlarge").efa is True
    assert instance_type("g5.xlarge").efa is False
    assert instance_type("trn1.32xlarge").efa is True
    assert instance_type("trn1.32xlarge").rdma is False  # not in MLC502's list
    assert instance_type("trn2.3xlarge").efa is True and instance_type("trn2.3xlarge").rdma is True
    assert instance_type("inf2.48xlarge").efa is False
    assert instance_type("p5.48xlarge").efa is True


def test_sagemaker_and_case_forms_resolve_to_the_same_entry():
    assert instance_type("ml.p4d.24xlarge") == instance_type("p4d.24xlarge")
    assert instance_type("ML.G5.2XLARGE") == instance_type("g5.2xlarge")
    assert instance_type(" p5.48xlarge ").name == "p5.48xlarge"


@pytest.mark.parametrize(
    "written",
    ["Standard_ND96asr_A100_v4", "Standard_ND96asr_v4", "standard_nd96asr_v4", "ND96asr_v4", "STANDARD_ND96ASR_V4", "nd96asr_v4"],
)
def test_azure_names_are_case_insensitive_with_optional_prefix(written):
    entry = instance_type(written)
    assert entry is not None
    assert entry.name == "Standard_ND96asr_v4"
    assert entry.gpu.name == "A100-40"


def test_gcp_machine_type_as_resource_path():
    entry = instance_type("zones/us-central1-a/machineTypes/a2-highgpu-2g")
    assert entry.name == "a2-highgpu-2g" and entry.count == 2
    assert instance_type("a3-edgegpu-8g-nolssd").name == "a3-edgegpu-8g"
    assert instance_type("a4-highgpu-8g-lowmem").name == "a4-highgpu-8g"
    assert instance_type("g5.xlarge-nolssd") is None


def test_host_architecture():
    assert instance_type("g5g.xlarge").arch == "arm64"
    assert instance_type("p6e-gb200.36xlarge").arch == "arm64"
    assert instance_type("a4x-highgpu-4g").arch == "arm64"
    assert instance_type("g4dn.xlarge").arch == "x86_64"
    # x86 T4 shapes step down to x86 shapes only (never Graviton g5g).
    assert all(
        smaller_gpu_same_cloud(instance_type(n), 16).arch == "x86_64"
        for n in ("g5.2xlarge", "g6.xlarge", "p4d.24xlarge")
    )
    # Grace (arm64) steps down to Graviton: no 4-GPU arm64 shape fits, so the largest fit, fewest vCPUs.
    assert smaller_gpu_same_cloud(instance_type("p6e-gb200.36xlarge"), 100).name == "g5g.xlarge"


def test_partial_gpu_is_recorded_as_a_fraction():
    sixth = instance_type("Standard_NV6ads_A10_v5")
    assert sixth.count == pytest.approx(1 / 6)
    assert sixth.partial_gpu is True
    assert sixth.memory_gib_per_gpu == pytest.approx(4.0)
    assert instance_type("Standard_NV18ads_A10_v5").memory_gib_per_gpu == pytest.approx(12.0)
    assert instance_type("Standard_NV72ads_A10_v5").count == 2
    assert instance_type("Standard_NV72ads_A10_v5").memory_gib_per_gpu == 24.0


@pytest.mark.parametrize(
    "name",
    ["m5.large", "n1-standard-8", "e2-medium", "Standard_D4s_v5", "p4d.48xlarge", "g5.3xlarge",
     "", "   ", "ml.", "a2-highgpu-3g", "Standard_", "nvidia-l4"],
)
def test_unknown_or_gpu_less_instance_types_are_none(name):
    assert instance_type(name) is None


def test_non_string_input_never_raises():
    assert instance_type(None) is None  # type: ignore[arg-type]
    assert gcp_accelerator(42) is None  # type: ignore[arg-type]
    assert gpu_model(None) is None  # type: ignore[arg-type]
    assert from_node_labels(None) is None  # type: ignore[arg-type]


def test_spot_capability():
    assert instance_type("g4dn.xlarge").spot_capable is True
    assert instance_type("p6e-gb200.36xlarge").spot_capable is False  # Capacity Blocks only
    assert instance_type("a3-highgpu-8g").spot_capable is True


# ---------------------------------------------------------- GCP accelerators


@pytest.mark.parametrize(
    "name,model,memory,bf16",
    [
        ("nvidia-tesla-t4", "T4", 16, False),
        ("nvidia-l4", "L4", 24, True),
        ("nvidia-tesla-v100", "V100-16", 16, False),
        ("nvidia-tesla-p100", "P100", 16, False),
        ("nvidia-tesla-p4", "P4", 8, False),
        ("nvidia-tesla-a100", "A100-40", 40, True),
        ("nvidia-a100-80gb", "A100-80", 80, True),
        ("nvidia-h100-80gb", "H100-80", 80, True),
        ("nvidia-h100-mega-80gb", "H100-80", 80, True),
        ("nvidia-h200-141gb", "H200", 141, True),
        ("nvidia-b200", "B200", 179, True),
        ("nvidia-gb200", "GB200", 185, True),
        ("nvidia-tesla-t4-vws", "T4", 16, False),
    ],
)
def test_gcp_accelerator_types(name, model, memory, bf16):
    acc = gcp_accelerator(name, 2)
    assert acc.cloud == "gcp" and acc.kind == "accelerator"
    assert acc.gpu.name == model and acc.gpu.memory_gib == memory and acc.gpu.bf16 is bf16
    assert acc.count == 2
    assert acc.rdma is False


def test_gcp_accelerator_default_count_and_paths():
    assert gcp_accelerator("nvidia-l4").count == 1
    full = gcp_accelerator("projects/p/zones/us-central1-a/acceleratorTypes/nvidia-tesla-t4", 4)
    assert full.name == "nvidia-tesla-t4" and full.count == 4
    assert gcp_accelerator("NVIDIA-L4").gpu.name == "L4"


@pytest.mark.parametrize(
    "name,model,chips",
    [
        ("tpu-v4-podslice", "TPU-v4", 1),
        ("tpu-v5-lite-podslice", "TPU-v5e", 1),
        ("tpu-v5p-slice", "TPU-v5p", 1),
        ("tpu-v6e-slice", "TPU-v6e", 1),
        ("v4-8", "TPU-v4", 4),
        ("v5litepod-8", "TPU-v5e", 8),
        ("v5p-8", "TPU-v5p", 4),
        ("v6e-16", "TPU-v6e", 16),
        ("v3-8", "TPU-v3", 4),
    ],
)
def test_tpu_types(name, model, chips):
    acc = gcp_accelerator(name)
    assert acc.is_tpu is True and acc.gpu.is_tpu is True
    assert acc.gpu.name == model and acc.count == chips


def test_unknown_gcp_accelerators():
    for name in ["nvidia-tesla-x1", "", "a2-highgpu-1g", "v9-8", "tpu-v99-slice"]:
        assert gcp_accelerator(name) is None


# ---------------------------------------------------------------- gpu_model


@pytest.mark.parametrize(
    "name,model",
    [
        ("T4", "T4"), ("t4", "T4"), ("L4", "L4"), ("A10G", "A10G"), ("a10g", "A10G"),
        ("A10", "A10"), ("L40S", "L40S"), ("V100-32", "V100-32"), ("A100-80", "A100-80"),
        ("A100", "A100-40"), ("H100", "H100-80"), ("V100", "V100-16"), ("H200", "H200"),
        ("B200", "B200"), ("MI300X", "MI300X"), ("Trainium2", "Trainium2"),
        ("Inferentia2", "Inferentia2"), ("Gaudi", "Gaudi"),
        ("nvidia-l4", "L4"), ("nvidia-tesla-t4", "T4"), ("nvidia-a100-80gb", "A100-80"),
        ("NVIDIA-A100-SXM4-80GB", "A100-80"), ("NVIDIA-A100-SXM4-40GB", "A100-40"),
        ("NVIDIA-A100-PCIE-40GB", "A100-40"), ("NVIDIA-A100-80GB-PCIe", "A100-80"),
        ("Tesla-T4", "T4"), ("Tesla-V100-SXM2-16GB", "V100-16"), ("Tesla-V100-SXM2-32GB", "V100-32"),
        ("NVIDIA-H100-80GB-HBM3", "H100-80"), ("NVIDIA-H100-NVL", "H100-NVL"),
        ("NVIDIA-L4", "L4"), ("NVIDIA-A10G", "A10G"), ("NVIDIA-L40S", "L40S"),
        ("Tesla-T4-SHARED", "T4"),
        ("p4d.24xlarge", "A100-40"), ("ml.g5.xlarge", "A10G"), ("g2-standard-8", "L4"),
        ("Standard_NC4as_T4_v3", "T4"), ("a3-ultragpu-8g", "H200"),
    ],
)
def test_gpu_model_resolution(name, model):
    resolved = gpu_model(name)
    assert isinstance(resolved, GpuModel)
    assert resolved.name == model


def test_bf16_support_table():
    assert gpu_model("T4").bf16 is False
    assert gpu_model("V100-16").bf16 is False
    assert gpu_model("V100-32").bf16 is False
    assert gpu_model("P100").bf16 is False
    assert gpu_model("A10G").bf16 is True
    assert gpu_model("L4").bf16 is True
    assert gpu_model("A100-40").bf16 is True
    assert gpu_model("H100").bf16 is True


def test_mig_slice_is_its_own_memory():
    slice_ = gpu_model("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")
    assert slice_.memory_gib == 5 and slice_.family == "A100"
    assert gpu_model("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb").memory_gib == 40


@pytest.mark.parametrize("name", ["", "foo", "RTX-9090", "NVIDIA-A100", "gpu", "my-instance", "80GB"])
def test_gpu_model_unknown(name):
    assert gpu_model(name) is None


def test_policy_matching_by_family_or_variant():
    a100_80 = gpu_model("A100-80")
    assert gpu_model_matches("A100", a100_80) is True
    assert gpu_model_matches("a100", gpu_model("A100-40")) is True
    assert gpu_model_matches("A100-40", a100_80) is False
    assert gpu_model_matches("nvidia-a100-80gb", a100_80) is True
    assert gpu_model_matches("p4de.24xlarge", a100_80) is True
    assert gpu_model_matches("L4", gpu_model("nvidia-l4")) is True
    assert gpu_model_matches("L4", gpu_model("L40S")) is False
    assert gpu_model_matches("H100", gpu_model("H100-NVL")) is True
    assert gpu_model_matches("H100", gpu_model("H200")) is False
    assert gpu_model_matches("T4", gpu_model("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")) is False
    assert gpu_model_matches("A100-40", gpu_model("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")) is True
    assert gpu_model_matches("quantum-gpu", a100_80) is None


# ------------------------------------------------------------- node labels


def test_labels_instance_type_gives_a_full_entry():
    for key in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"):
        found = from_node_labels({key: "g5.12xlarge"})
        assert isinstance(found, Accelerator) and found.name == "g5.12xlarge" and found.count == 4
    aks = from_node_labels({"node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4"})
    assert isinstance(aks, Accelerator) and aks.gpu.name == "A100-80"
    gke = from_node_labels({"node.kubernetes.io/instance-type": "a3-megagpu-8g"})
    assert isinstance(gke, Accelerator) and gke.rdma is True


def test_labels_gke_accelerator_gives_a_model():
    assert from_node_labels({"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}) == gpu_model("T4")
    assert from_node_labels({"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}).name == "H100-80"
    # A GPU-less machine type plus an attached accelerator: the model is what is pinned.
    both = {
        "node.kubernetes.io/instance-type": "n1-standard-8",
        "cloud.google.com/gke-accelerator": "nvidia-tesla-v100",
    }
    assert from_node_labels(both) == gpu_model("V100-16")


def test_labels_gke_tpu():
    found = from_node_labels(
        {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4"}
    )
    assert isinstance(found, GpuModel) and found.name == "TPU-v5e" and found.is_tpu


def test_labels_karpenter():
    k = "karpenter.k8s.aws/"
    assert from_node_labels({k + "instance-gpu-name": "a10g"}).name == "A10G"
    assert from_node_labels({k + "instance-gpu-name": "t4"}).name == "T4"
    assert from_node_labels({k + "instance-gpu-name": "l4"}).name == "L4"
    assert from_node_labels({k + "instance-gpu-name": "h100"}) is None  # H100 80GB or NVL: unknown
    assert from_node_labels({k + "instance-gpu-name": "a100"}) is None  # 40 or 80 GiB: unknown
    assert from_node_labels({k + "instance-gpu-name": "a100", k + "instance-gpu-memory": "81920"}).name == "A100-80"
    assert from_node_labels({k + "instance-gpu-name": "a100", k + "instance-gpu-memory": "40960"}).name == "A100-40"
    assert from_node_labels({k + "instance-gpu-name": "h100", k + "instance-gpu-memory": "81920"}).name == "H100-80"
    assert from_node_labels({k + "instance-family": "p4de"}).name == "A100-80"
    full = from_node_labels({k + "instance-family": "p5", k + "instance-size": "48xlarge"})
    assert isinstance(full, Accelerator) and full.name == "p5.48xlarge"
    assert from_node_labels({k + "instance-gpu-count": "8"}) is None
    assert from_node_labels({k + "instance-accelerator-name": "inferentia"}).name == "Inferentia"
    assert from_node_labels({k + "instance-accelerator-name": "trainium"}).name == "Trainium"
    assert from_node_labels({k + "instance-accelerator-name": "a100"}) is None  # not a Neuron name


def test_labels_eks_auto_mode_and_aks():
    e = "eks.amazonaws.com/"
    assert from_node_labels({e + "instance-gpu-name": "t4"}).name == "T4"
    assert from_node_labels({e + "instance-gpu-name": "a100", e + "instance-gpu-memory": "81920"}).name == "A100-80"
    assert from_node_labels({e + "instance-gpu-name": "a100"}) is None
    assert from_node_labels({e + "instance-family": "g6e"}).name == "L40S"
    full = from_node_labels({e + "instance-family": "g4dn", e + "instance-size": "8xlarge"})
    assert isinstance(full, Accelerator) and full.name == "g4dn.8xlarge"
    aks = from_node_labels({"karpenter.azure.com/sku-name": "Standard_NC24ads_A100_v4"})
    assert isinstance(aks, Accelerator) and aks.gpu.name == "A100-80"
    assert from_node_labels({"karpenter.azure.com/sku-gpu-name": "T4"}).name == "T4"
    assert from_node_labels({"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"}).name == "MI300X"


def test_labels_gpu_feature_discovery():
    assert from_node_labels({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}).name == "A100-80"
    assert from_node_labels({"nvidia.com/gpu.product": "Tesla-T4"}).name == "T4"
    assert from_node_labels({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}).name == "H100-80"
    assert from_node_labels({"nvidia.com/gpu.product": "NVIDIA-A100", "nvidia.com/gpu.memory": "40960"}).name == "A100-40"
    assert from_node_labels({"nvidia.com/gpu.product": "NVIDIA-A100"}) is None
    assert from_node_labels({"nvidia.com/gpu.memory": "40960"}) is None


def test_labels_without_gpu_information():
    assert from_node_labels({}) is None
    assert from_node_labels({"kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m5.large"}) is None
    assert from_node_labels({"cloud.google.com/gke-accelerator": "nvidia-unknown"}) is None
    assert from_node_labels({"cloud.google.com/gke-nodepool": "gpu-pool"}) is None


# --------------------------------------------------------- smaller offering


def test_smaller_gpu_same_cloud_prefers_same_count_then_largest_fit():
    p4d = instance_type("p4d.24xlarge")  # 8 x 40 GiB
    smaller = smaller_gpu_same_cloud(p4d, 20)
    # 8-GPU AWS NVIDIA shapes with <= 20 GiB: p3.16xlarge (V100-16) and g4dn.metal (T4);
    # equal memory -> fewer vCPUs (64 < 96).
    assert smaller.name == "p3.16xlarge"
    # 1-GPU AWS shapes <= 40 GiB: the 24 GiB ones (A10G, L4) at 4 vCPUs; by name g5 < g6.
    one = smaller_gpu_same_cloud(instance_type("p5.4xlarge"), 40)
    assert one.name == "g5.xlarge"
    a2 = smaller_gpu_same_cloud(instance_type("a2-ultragpu-1g"), 40)
    assert a2.name == "a2-highgpu-1g"
    g2 = smaller_gpu_same_cloud(instance_type("a3-highgpu-1g"), 40)
    assert g2.name == "a2-highgpu-1g"
    azure = smaller_gpu_same_cloud(instance_type("Standard_NC24ads_A100_v4"), 24)
    assert azure.cloud == "azure" and azure.count == 1 and azure.gpu.memory_gib == 24
    assert azure.name == "Standard_NV36adms_A10_v5"  # ties on vCPUs: by name


def test_smaller_gpu_for_gcp_accelerator_types_stays_an_accelerator_type():
    acc = smaller_gpu_same_cloud(gcp_accelerator("nvidia-a100-80gb", 2), 40)
    assert acc.kind == "accelerator" and acc.name == "nvidia-tesla-a100" and acc.count == 2
    acc = smaller_gpu_same_cloud(gcp_accelerator("nvidia-tesla-a100", 1), 20)
    assert acc.name in {"nvidia-tesla-p100", "nvidia-tesla-t4", "nvidia-tesla-v100"}
    assert acc.gpu.memory_gib == 16


def test_smaller_gpu_none_when_nothing_fits():
    assert smaller_gpu_same_cloud(instance_type("g4dn.xlarge"), 4) is None
    assert smaller_gpu_same_cloud(instance_type("Standard_NV6ads_A10_v5"), 2) is None
    # Neuron devices only step down to Neuron devices.
    trn = smaller_gpu_same_cloud(instance_type("trn2.48xlarge"), 48)
    assert trn.gpu.vendor == "aws" and trn.gpu.kind == "neuron" and trn.gpu.memory_gib <= 48


def test_catalogue_size_per_cloud():
    entries = all_accelerators()
    per_cloud = {cloud: sum(1 for e in entries if e.cloud == cloud) for cloud in ("aws", "gcp", "azure")}
    assert per_cloud == {"aws": 72, "gcp": 39, "azure": 28}
    assert len({(e.cloud, e.name) for e in entries}) == len(entries)


# ------------------------------------------------------------ robustness

from hypothesis import given, settings, strategies as st  # noqa: E402

from mlcost_lint.catalogue import parameter_count  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_lookups_never_raise_on_any_text(text):
    instance_type(text)
    gcp_accelerator(text)
    gpu_model(text)
    parameter_count(text)
    from_node_labels({"node.kubernetes.io/instance-type": text, "nvidia.com/gpu.product": text,
                      "karpenter.k8s.aws/instance-gpu-name": text,
                      "karpenter.k8s.aws/instance-gpu-memory": text})


def test_label_values_of_other_types_are_ignored():
    assert from_node_labels({"node.kubernetes.io/instance-type": ["p4d.24xlarge"]}) is None
    assert from_node_labels({1: 2}) is None
    assert from_node_labels({"karpenter.k8s.aws/instance-gpu-name": "a100",
                             "karpenter.k8s.aws/instance-gpu-memory": "lots"}) is None


def test_every_entry_is_well_formed():
    for entry in all_accelerators():
        assert entry.count > 0
        assert entry.gpu.memory_gib > 0
        assert entry.vcpus and entry.vcpus > 0
        assert "as of" in entry.source
        assert entry.is_tpu == entry.gpu.is_tpu
        assert instance_type(entry.name) == entry, entry.name
