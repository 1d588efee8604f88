"""AWS ParallelCluster v3 cluster configs as node pools.

A config is YAML with ``Scheduling.Scheduler: slurm`` and
``Scheduling.SlurmQueues`` (ParallelCluster 3 schema). Each compute
resource of each queue is one node pool: its instance type
(``InstanceType``, or the ``Instances[].InstanceType`` list of a flexible
compute resource), ``MinCount`` (default 0: Slurm powers nodes up when jobs
are queued), the queue's ``CapacityType`` (ONDEMAND by default, SPOT,
CAPACITY_BLOCK), a ``CapacityReservationTarget`` on the resource or its
queue (an ODCR: reserved), and ``Efa.Enabled``. The pool is a
:class:`CloudResource` of the pseudo type ``parallelcluster_compute_resource``
(no Terraform rule knows that type), read by the pool spec in
:mod:`mlcost_lint.model.pool_specs` like any node group, so MLC203 applies as
written. A queue's name is its Slurm partition (``#SBATCH --partition``).
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import Location
from mlcost_lint.parse.document import Document

RESOURCE_TYPE = "parallelcluster_compute_resource"
CLUSTER_TYPE = "parallelcluster_cluster"


def is_parallelcluster(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    scheduling = data.get("Scheduling")
    return isinstance(scheduling, dict) and isinstance(scheduling.get("Scheduler"), str) \
        and scheduling["Scheduler"].strip().lower() == "slurm" and isinstance(scheduling.get("SlurmQueues"), list)


def _region(data: dict) -> Any:
    region = data.get("Region")
    return region if isinstance(region, str) and "$" not in region and "{" not in region else None


def _tag_map(value: Any) -> Any:
    """``Tags: [{Key: k, Value: v}]`` as a dict; UNKNOWN when not that shape."""
    from mlcost_lint.model.core import UNKNOWN

    if value is None:
        return {}
    if not isinstance(value, list):
        return UNKNOWN
    out = {}
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("Key"), str) or "$" in item["Key"]:
            return UNKNOWN
        out[item["Key"]] = item.get("Value")
    return out


def cluster_resource(doc: Document) -> CloudResource:
    """The cluster as one cost-bearing resource for MLC101: ParallelCluster
    puts the cluster's ``Tags`` on every resource it creates and a queue's
    ``Tags`` on that queue's nodes, so a key counts when every queue's nodes
    get it (from the cluster or the queue). Written at the cluster's
    ``Tags`` (else the config's first line)."""
    from mlcost_lint.model.core import UNKNOWN

    data = doc.data
    cluster = _tag_map(data.get("Tags"))
    tags: Any = cluster
    if cluster is not UNKNOWN:
        everywhere: dict | None = None
        for queue in data["Scheduling"]["SlurmQueues"]:
            own = _tag_map(queue.get("Tags")) if isinstance(queue, dict) else UNKNOWN
            if own is UNKNOWN:
                everywhere = None
                tags = UNKNOWN
                break
            merged = {**own, **cluster}
            everywhere = merged if everywhere is None else {k: v for k, v in everywhere.items() if k in merged}
        if everywhere is not None:
            tags = everywhere
    where = {"Tags": doc.location(("Tags",))} if "Tags" in data else {}
    attrs: dict[str, Any] = {"Tags": data.get("Tags")}
    # The cluster's CloudWatch log group (MLC401): Monitoring.Logs.CloudWatch,
    # on unless Enabled is false, RetentionInDays (ParallelCluster's default 180).
    logs_path = ("Monitoring", "Logs", "CloudWatch")
    cloudwatch = _at(data, logs_path)
    if isinstance(cloudwatch, dict) and cloudwatch.get("Enabled") is False:
        attrs["RetentionInDays"] = UNKNOWN     # no CloudWatch logs: no retention to judge
    elif isinstance(cloudwatch, dict) and "RetentionInDays" in cloudwatch:
        attrs["RetentionInDays"] = cloudwatch["RetentionInDays"]
        where["RetentionInDays"] = doc.location(logs_path + ("RetentionInDays",))
    name = doc.path.rsplit("/", 1)[-1]
    return CloudResource(type=CLUSTER_TYPE, name=name, address=f"ParallelCluster config {name}", provider="aws",
                         location=doc.location(()), attrs=attrs, attr_locations=where,
                         tags=tags, tags_attribute="Tags", origin="parallelcluster")


def _at(data: Any, path: tuple) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def compute_resources(doc: Document) -> list[CloudResource]:
    """One node pool per compute resource of every queue."""
    out: list[CloudResource] = [cluster_resource(doc)]
    data = doc.data
    queues = data["Scheduling"]["SlurmQueues"]
    region = _region(data)
    for qi, queue in enumerate(queues):
        if not isinstance(queue, dict):
            continue
        qpath = ("Scheduling", "SlurmQueues", qi)
        qname = queue.get("Name") if isinstance(queue.get("Name"), str) else f"queue{qi}"
        resources = queue.get("ComputeResources")
        if not isinstance(resources, list):
            continue
        for ci, cr in enumerate(resources):
            if not isinstance(cr, dict):
                continue
            cpath = qpath + ("ComputeResources", ci)
            cname = cr.get("Name") if isinstance(cr.get("Name"), str) else f"compute{ci}"
            attrs: dict[str, Any] = {}
            where: dict[str, Location] = {}

            def put(attr: str, value: Any, path: tuple) -> None:
                attrs[attr] = value
                where[attr] = doc.location(path)

            if cr.get("InstanceType") is not None:
                put("InstanceType", cr["InstanceType"], cpath + ("InstanceType",))
            elif isinstance(cr.get("Instances"), list):
                types = [i.get("InstanceType") if isinstance(i, dict) else i for i in cr["Instances"]]
                put("InstanceType", types, cpath + ("Instances",))
            for key in ("MinCount", "MaxCount"):
                if key in cr:
                    put(key, cr[key], cpath + (key,))
            if "CapacityType" in cr:        # not in the v3 schema, but read when written
                put("CapacityType", cr["CapacityType"], cpath + ("CapacityType",))
            elif "CapacityType" in queue:
                put("CapacityType", queue["CapacityType"], qpath + ("CapacityType",))
            target = cr.get("CapacityReservationTarget") or queue.get("CapacityReservationTarget")
            if target:
                at = cpath if cr.get("CapacityReservationTarget") else qpath
                put("CapacityReservationTarget", target, at + ("CapacityReservationTarget",))
            efa = cr.get("Efa")
            if isinstance(efa, dict):
                attrs["Efa"] = dict(efa)
                where["Efa"] = doc.location(cpath + ("Efa",))
                if "Enabled" in efa:
                    where["Efa.Enabled"] = doc.location(cpath + ("Efa", "Enabled"))
            out.append(CloudResource(
                type=RESOURCE_TYPE, name=f"{qname}/{cname}", address=f"SlurmQueues[{qname}].{cname}",
                provider="aws", location=doc.location(cpath), attrs=attrs, attr_locations=where,
                region=region if region else CloudResource.__dataclass_fields__["region"].default,
                origin="parallelcluster",
            ))
    return out
