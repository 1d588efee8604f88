from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.link import capacity_of
from mlcost_lint.model.capacity import RESERVED
from mlcost_lint.model.kept_capacity import kept_capacity
from mlcost_lint.model.node_pools import gpu_pools
from mlcost_lint.catalogue.devices import noun_for_model
from mlcost_lint.pricing import ALWAYS_ON, Quantity
from mlcost_lint.rules.compute.gpu_capacity import (format_gpus, pool_price, pool_target, template_noun,
                                                    template_price, template_target)

# Long-lived Ray clusters that wait for jobs. Not a RayJob's cluster (it lives
# as long as its job) and not serving capacity (RayService, Deployments,
# LeaderWorkerSet): a serving replica has work (rules.md, MLC203).
RAY_CLUSTER_KINDS = frozenset({"RayCluster"})

# The fix names every field that keeps nodes up, and the autoscaler that
# must exist to add nodes back when a job arrives.
_SCALE_TO_ZERO = {
    "EKS node group": "set scaling_config.min_size = 0 and desired_size = 0; a cluster autoscaler or Karpenter "
                      "must run in the cluster to add nodes when jobs arrive",
    "autoscaling group": "set min_size = 0 and desired_capacity = 0; an autoscaler (cluster autoscaler, "
                         "Karpenter, a scaling policy) must add instances when jobs arrive",
    "Batch compute environment": "set compute_resources.min_vcpus = 0 and desired_vcpus = 0 (Batch scales out "
                                 "when jobs are queued)",
    "GKE node pool": "add an autoscaling block with min_node_count = 0 (or total_min_node_count = 0) and drop a "
                     "fixed node_count; the GKE cluster autoscaler adds nodes when pods are pending",
    "AKS node pool": "set auto_scaling_enabled = true with min_count = 0 (instead of a fixed node_count); the "
                     "AKS cluster autoscaler adds nodes when pods are pending",
    "Azure ML compute cluster": "set scale_settings.min_node_count = 0 (Azure ML scales out when jobs are queued)",
    "Azure ML compute": "set min_instances: 0 (Azure ML scales out when jobs are queued and back in after "
                        "idle_time_before_scale_down)",
    "ParallelCluster compute resource": "set MinCount: 0 (Slurm power-saving starts nodes when jobs are queued "
                                        "and stops them after ScaledownIdletime)",
}

# Registry-module node groups: the module's input names for the plan-shape
# attributes the model fills (terraform-aws-modules/eks, GKE and AKS modules).
MODULE_INPUT_NAMES = {
    "scaling_config.min_size": "min_size",
    "autoscaling.min_node_count": "min_count",
    "autoscaling.total_min_node_count": "total_min_count",
}
MODULE_FIX = {
    "EKS node group": "set min_size = 0 and desired_size = 0 in the module's node group; a cluster autoscaler or "
                      "Karpenter must run in the cluster to add nodes when jobs arrive",
    "autoscaling group": "set min_size = 0 and desired_size = 0 in the module's node group; an autoscaler must "
                         "add instances when jobs arrive",
    "GKE node pool": "set autoscaling = true with min_count = 0 in the module's node_pools entry (and no fixed "
                     "node_count)",
    "AKS node pool": "set auto_scaling_enabled = true with min_count = 0 in the module's node pool",
}


def _gpus(n: float, model: str) -> str:
    """ "2 T4 GPUs", "4 TPU-v4 TPU chips" reads badly: "4 TPU-v4 chips"."""
    noun = noun_for_model(model)
    word = noun.one if n == 1 else noun.many
    if word.split()[0] in model:           # "TPU chip" for TPU-v4, "Trainium chip" for Trainium2
        word = word.split(" ", 1)[1] if " " in word else word
    return f"{format_gpus(n)} {model} {word}"


class IdleGpuCapacity(Rule):
    """
    ## What it does
    Flags GPU capacity kept running while no job needs it: an EKS node group
    (also a node group of the terraform-aws-modules EKS module) with
    `min_size` > 0, an autoscaling group or AWS Batch compute environment
    (`min_vcpus`) with GPU instance types and a minimum above 0, a GKE node
    pool with a GPU and no autoscaling or a minimum above 0, an AKS node pool
    with a GPU size and `min_count` > 0 (or a fixed `node_count` without
    autoscaling), an Azure ML compute cluster with `min_node_count` > 0, an
    AWS ParallelCluster compute resource with `MinCount` > 0, and
    a RayCluster GPU worker group with `minReplicas` > 0. Reserved
    capacity (capacity blocks, reservations) is already paid for and is not
    flagged, and neither is serving capacity (RayService, Deployments,
    LeaderWorkerSet): a serving replica has work. The fix names every field
    that keeps nodes up and the autoscaler that must exist.

    ## Why is this expensive
    A minimum node count keeps that many GPU machines running around the
    clock. Between training runs they idle at full price: two
    p4d.24xlarge kept "warm" cost about $500,000 a year.

    ## Example
    ```hcl
    resource "aws_eks_node_group" "gpu" {
      instance_types = ["p4d.24xlarge"]
      scaling_config {
        min_size     = 2
        desired_size = 2
        max_size     = 8
      }
    }
    ```

    ## Fix
    Scale GPU capacity to zero (the minimum and the desired size) and make
    sure an autoscaler (cluster autoscaler or Karpenter on EKS; built in on
    GKE and AKS) adds nodes when jobs arrive:
    ```hcl
      scaling_config {
        min_size     = 0
        desired_size = 0
        max_size     = 8
      }
    ```
    """

    code = "MLC203"
    name = "idle-gpu-capacity"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.COMPUTE
    reports_in = frozenset({Reports.CLOUD, Reports.WORKLOAD})
    summary = "GPU capacity kept running while no job needs it"
    fix = "Set the GPU pool's minimum size to 0 and let the autoscaler add nodes for jobs."

    def check(self, project, settings) -> Iterator[Finding]:
        yield from self._terraform(project)
        yield from self._ray(project, settings)

    def _terraform(self, project) -> Iterator[Finding]:
        for pool in gpu_pools(project):
            if pool.spec.kind not in _SCALE_TO_ZERO:
                continue
            if pool.capacity == RESERVED:
                continue
            if pool.capacity is UNKNOWN and pool.capacity_attr is not None:
                continue     # a capacity setting whose value is unknown may be a reservation
            kept = kept_capacity(pool)
            if kept is None or kept is UNKNOWN:
                continue
            types = pool.describe_types()
            model = pool.gpu_name
            per_zone = " per zone" if pool.spec.per_zone else ""
            if kept.nodes is None:
                what = (f"has no autoscaling: its {types} nodes ({_gpus(pool.gpus_per_node, model)} each) "
                        "run whether or not a job needs them")
            else:
                if kept.attr is None:
                    name = pool.spec.minimum[0] if kept.autoscaling else pool.spec.fixed[0]
                    setting = f"{name} defaults to {kept.value}"
                elif pool.resource.origin == "module-input":
                    name = MODULE_INPUT_NAMES.get(kept.attr, kept.attr)
                    written = pool.attr(kept.attr) in pool.resource.attr_locations
                    setting = f"{name} = {kept.value}" if written else \
                        f"{name} not set: the module's default is {kept.value}"
                else:
                    setting = f"{kept.attr} = {kept.value}"
                if not kept.autoscaling:
                    setting = "no autoscaling, " + setting
                at_least = "at least " if pool.spec.unit == "vcpus" else ""
                what = (f"keeps {at_least}{kept.nodes} x {types} = "
                        f"{_gpus(kept.gpus(pool), model)}{per_zone} running with no job ({setting})")
            where_attr = kept.attr or (pool.spec.autoscaling[0] if pool.spec.autoscaling and
                                       pool.get(pool.spec.autoscaling[0]) is not None else None)
            fix = _SCALE_TO_ZERO[pool.spec.kind]
            if pool.resource.origin == "module-input":
                fix = MODULE_FIX.get(pool.spec.kind, fix)
            # Always-on: the nodes kept with no job, each at its type's price.
            quantity = Quantity(pool_target(pool), kept.nodes, ("node", "nodes"), ALWAYS_ON,
                                price=pool_price(pool), count_at_least=pool.spec.unit == "vcpus")
            yield self.finding(
                f"{pool.spec.kind} {pool.address} {what}; {fix}",
                pool.loc(where_attr),
                pool.address,
                related=pool.resource.related_module_calls(),
                object_line=pool.resource.location.line,
                quantity=quantity,
            )

    def _ray(self, project, settings) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            if workload.kind not in RAY_CLUSTER_KINDS:
                continue
            for template in workload.gpu_templates():
                minimum = template.min_replicas
                if template.role == "head" or not isinstance(minimum, int) or minimum <= 0:
                    continue
                capacity = capacity_of(project, template)
                if capacity.kind == RESERVED:
                    continue
                per_pod = template.gpu_count()
                # A multi-host group (TPU slices) is numOfHosts pods per replica.
                known_hosts = isinstance(template.hosts_per_replica, int)
                hosts = template.hosts_per_replica if known_hosts else 1
                host_text = f"numOfHosts: {hosts} x " if hosts > 1 else ("" if known_hosts else "numOfHosts: ? x ")
                total = minimum * hosts * per_pod
                group_path = tuple(template.key_path[:-1])
                noun = template_noun(template)
                quantity = Quantity(template_target(project, template, settings),
                                    total if isinstance(total, (int, float)) else None, (noun.one, noun.many),
                                    ALWAYS_ON, per_accelerator=True, price=template_price(project, template),
                                    count_at_least=not known_hosts)
                yield self.finding(
                    f"{workload.kind} {workload.name} worker group {template.role} keeps minReplicas: {minimum} x "
                    f"{host_text}{noun.count(per_pod)} = "
                    f"{'' if known_hosts else 'at least '}{noun.count(total)} running with no "
                    "job; set minReplicas: 0 with spec.enableInTreeAutoscaling: true (the Ray autoscaler adds "
                    "workers for jobs)",
                    workload.document.location(group_path + ("minReplicas",)),
                    f"{workload.address}/{template.role}",
                    related=capacity.related,
                    object_line=workload.loc().line,
                    quantity=quantity,
                )
