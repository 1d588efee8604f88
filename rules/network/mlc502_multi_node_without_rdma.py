from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.model.kubernetes import PodTemplate, Workload
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule

# Kinds whose several GPU pods form one training job (rules.md MLC502).
MULTI_POD_KINDS = frozenset({
    "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob", "TrainJob",
    "JobSet", "RayJob", "RayCluster", "LeaderWorkerSet",
})
# Pod-side RDMA / multi-NIC signals: extended resources (prefixes) and annotations.
RDMA_RESOURCE_PREFIXES = ("vpc.amazonaws.com/efa", "rdma/", "networking.gke.io.networks/", "nvidia.com/hostdev",
                          "mellanox.com/", "nvidia.com/rdma", "openshift.io/")
RDMA_ANNOTATIONS = ("networking.gke.io/interfaces", "networking.gke.io/default-interface",
                    "devices.gke.io/container.tcpx-daemon", "devices.gke.io/container.tcpxo-daemon",
                    "k8s.v1.cni.cncf.io/networks")
TCPX_MARKERS = ("tcpgpudmarxd", "tcpxo", "tcpx-daemon", "nccl-plugin-gpudirecttcpx", "fastrak")
# Environment variables only the GPUDirect-TCPX(O) NCCL plugins read: a container that sets them sets the fabric up.
TCPX_ENV_PREFIXES = ("NCCL_GPUDIRECTTCPX_", "NCCL_FASTRAK_")
RDMA_NAME = {"aws": "EFA", "azure": "InfiniBand", "gcp": "GPUDirect-TCPX(O) multi-NIC networking"}
POD_SIGNAL = {"aws": "no vpc.amazonaws.com/efa request", "azure": "no rdma/* device request",
              "gcp": "no GPUDirect-TCPX(O) or GKE multi-networking setup"}


def is_multi_node(project: Any, workload: Workload) -> tuple[bool, str]:
    pods = 0
    for t in workload.gpu_templates():
        replicas = t.replicas if t.replicas is not None else 1
        if replicas is UNKNOWN:
            return False, ""
        pods += replicas
        for c in t.containers:
            for launch in project.links.launches_of(c):
                if isinstance(launch.nodes, int) and launch.nodes > 1:
                    return True, f"{launch.launcher} on {launch.nodes} nodes"
    if workload.managed is not None and pods > 1:
        return True, f"{pods} instances"
    job = workload.batch
    if job is not None and isinstance(job.nodes, int) and job.nodes > 1 and workload.gpu_templates():
        return True, f"{job.label} on {job.nodes} nodes"
    if workload.kind in MULTI_POD_KINDS or (workload.kind == "Job" and workload.api_version.startswith("batch.volcano.sh")):
        if pods > 1:
            return True, f"{pods} GPU pods"
    return False, ""


def pod_has_rdma(template: PodTemplate) -> bool:
    containers = [*template.containers, *template.init_containers]
    for c in containers:
        for source in (c.requests, c.limits):
            if any(str(k).startswith(RDMA_RESOURCE_PREFIXES) for k in source):
                return True
        text = f"{c.name} {c.image or ''}".lower()
        if any(marker in text for marker in TCPX_MARKERS):
            return True
        if any(str(name).upper().startswith(TCPX_ENV_PREFIXES) for name in c.env):
            return True
    if any(str(k).startswith(RDMA_ANNOTATIONS) or str(k).startswith("networking.gke.io") for k in template.annotations):
        return True
    spec = template.document.get(template.spec_path)
    if isinstance(spec, dict) and spec.get("hostNetwork") is True:
        return True   # host networking can reach the host's RDMA devices: not judged
    return False


def pool_side(project: Any, template: PodTemplate) -> tuple[bool | None, str]:
    """(RDMA enabled on the linked pool, text); None when it cannot be told."""
    from mlcost_lint.link.pools import linked_pool

    pool = linked_pool(project, template)
    if pool is None:
        return False, ""
    res = pool.resource
    if res.type == "parallelcluster_compute_resource":
        efa = res.get("Efa.Enabled")
        if efa is UNKNOWN or (efa is not None and not isinstance(efa, bool)):
            return None, ""
        if efa:
            return True, ""
        return False, f"ParallelCluster {res.address} does not set Efa.Enabled: true"
    if pool.cloud == "aws":
        efa = res.attrs.get("enable_efa_support")
        if efa is True or efa is UNKNOWN:
            return (None if efa is UNKNOWN else True), ""
        if res.origin == "module-input" and "network_interfaces" in res.attr_locations:
            return None, ""
        lt = res.attrs.get("launch_template")
        if lt:
            found = _launch_template(project, lt)
            if found is None:
                return None, ""
            if found:
                return True, ""
            return False, f"{res.address} launch template has no EFA interface"
        return False, f"{res.address} does not enable EFA (enable_efa_support / launch template interface_type = \"efa\")"
    if pool.cloud == "google":
        if res.origin == "module-input":
            return None, ""
        net = res.get(f"{pool.block_path + '.' if pool.block_path else ''}network_config.additional_node_network_configs")
        if net:
            return True, ""
        if net is UNKNOWN:
            return None, ""
        return False, f"{res.address} has no additional_node_network_configs"
    return False, ""


def _launch_template(project: Any, block: Any) -> bool | None:
    """Whether the node group's launch template has an EFA interface; None
    when the template is not in the scan or cannot be resolved."""
    block = block[0] if isinstance(block, list) and block else block
    if not isinstance(block, dict):
        return None
    name, ident = block.get("name"), block.get("id")
    for res in project.terraform.of_type("aws_launch_template"):
        if (isinstance(name, str) and res.attrs.get("name") == name) or (isinstance(ident, str) and res.attrs.get("id") == ident):
            nics = res.attrs.get("network_interfaces")
            if nics is UNKNOWN:
                return None
            if isinstance(nics, list):
                kinds = [n.get("interface_type") if isinstance(n, dict) else UNKNOWN for n in nics]
                if UNKNOWN in kinds:
                    return None
                return any(isinstance(k, str) and k.lower() in ("efa", "efa-only") for k in kinds)
            return False
    return None


class MultiNodeWithoutRdma(Rule):
    """
    ## What it does
    Flags multi-node GPU training (a Kubeflow job, JobSet, Volcano job,
    LeaderWorkerSet or MPIJob with several GPU pods, RayJob/RayCluster GPU
    worker groups with several pods, or a launcher with `--nnodes` > 1) on
    nodes whose type supports RDMA (AWS EFA on p4d/p4de/p5*/p6*, trn1n/trn2;
    Azure InfiniBand on ND-series; GCP GPUDirect on the multi-NIC A3/A4
    shapes) while neither the pods request the RDMA device
    (`vpc.amazonaws.com/efa`, `rdma/*`, the GPUDirect-TCPX(O) setup, GKE
    multi-networking) nor the linked Terraform node group/pool enables it
    (`enable_efa_support`, a launch template interface with
    `interface_type = "efa"`, GKE additional node networks).

    The node type must be known from an instance/machine type (an
    instance-type selector or a linked pool); an accelerator-only selector
    leaves it unknown. Without Terraform in the scan only the pod side is
    judged. Host networking counts as a possible RDMA path and is not judged.
    A multi-node Slurm job whose `--partition` is a ParallelCluster queue in
    the scan is judged by that compute resource's `Efa.Enabled`.

    ## Why is this expensive
    These instances are priced for their RDMA fabric (a p5.48xlarge has 3200
    Gbps of EFA). Without it NCCL falls back to TCP sockets, all-reduce takes
    many times longer, and every step of every GPU waits on the network.

    ## Example
    ```yaml
    kind: PyTorchJob
    spec:
      pytorchReplicaSpecs:
        Worker:
          replicas: 4
          template:
            spec:
              nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
              containers:
                - resources: {limits: {nvidia.com/gpu: 8}}
    ```

    ## Fix
    Request the devices (`vpc.amazonaws.com/efa: 32` on p5.48xlarge,
    `rdma/ib` on ND-series, the GPUDirect-TCPXO sidecar and networks on A3
    Mega) and enable them on the node group (`enable_efa_support = true`).
    """

    code = "MLC502"
    name = "multi-node-without-rdma"
    level = Level.WARNING
    confidence = Confidence.MEDIUM
    category = Category.NETWORK
    reports_in = frozenset({Reports.WORKLOAD})
    summary = "Multi-node GPU training on RDMA-capable nodes without RDMA networking"
    fix = "Request the EFA/InfiniBand/GPUDirect devices and enable them on the node group."

    def check(self, project, settings) -> Iterator[Finding]:
        from mlcost_lint.link import node_type_of

        for workload in project.kubernetes.workloads:
            if workload.managed is not None and workload.managed.rdma_by_service:
                continue   # SageMaker (EFA), Azure ML (InfiniBand) set the fabric up themselves
            multi, why = is_multi_node(project, workload)
            if not multi:
                continue
            templates = workload.gpu_templates()
            if any(pod_has_rdma(t) for t in templates):
                continue
            for template in templates:
                node = node_type_of(project, template)
                if node is None or not getattr(node, "rdma", False):
                    continue
                enabled, pool_text = pool_side(project, template)
                if enabled is not False:
                    continue
                placement = project.links.placement_of(template)
                container = next(c for c in template.containers if c.gpu_count() not in (0, UNKNOWN))
                fabric = RDMA_NAME.get(node.cloud or "", "RDMA")
                missing = POD_SIGNAL.get(node.cloud or "", "no RDMA device request")
                if workload.managed is not None:
                    missing = ("no GPUDirect-TCPX(O) setup in its container (Vertex AI does not set it up: the "
                               "NCCL plugin and its NCCL_GPUDIRECTTCPX_* / NCCL_FASTRAK_* variables)")
                if pool_text:
                    missing += f" and {pool_text}"
                related = []
                pools = project.links.pools_of(template)
                if len(pools) == 1:
                    related.append(Related(pools[0].pool.loc(), f"node group/pool {pools[0].pool.address}"))
                elif placement is not None and placement.node_type_how:
                    sel = [loc for k, loc in _selector_locations(template) if k in placement.node_type_how]
                    if sel:
                        related.append(Related(sel[0], placement.node_type_how))
                role = f" ({template.role})" if template.role else ""
                if workload.batch is not None:
                    job = workload.batch
                    where = job.partition_at.location if job.partition_at is not None else job.header
                    yield self.finding(
                        f"{job.title} trains across nodes ({why}) on {node.name} ({job.partition_at.written}, line "
                        f"{job.partition_at.location.line}), which "
                        f"supports {fabric}, but {pool_text}: NCCL falls back to TCP and every step waits on "
                        "the network; set Efa.Enabled: true on the compute resource",
                        where, workload.address, related=related, object_line=job.header.line)
                    break
                yield self.finding(
                    f"{workload.kind} {workload.name}{role} trains across nodes ({why}) on {node.name}, which "
                    f"supports {fabric}, but has {missing}: NCCL falls back to TCP and every step waits on the "
                    "network",
                    container.loc(*container.gpu_resource_path()),
                    f"{workload.address}/{template.role or 'template'}",
                    related=related,
                    object_line=template.loc().line,
                )
                break


def _selector_locations(template: PodTemplate):
    from mlcost_lint.model.scheduling import selector_of

    return [(k, loc) for k, (_v, loc, _s) in selector_of(template).pairs.items()]
