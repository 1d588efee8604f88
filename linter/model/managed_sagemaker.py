"""SageMaker training jobs from Terraform (``aws_sagemaker_training_job``,
configuration or plan) as managed jobs.

Fields (AWS provider, CreateTrainingJob): ``resource_config`` instance type
and count (a ``ml.`` name resolves to its EC2 type through the catalogue),
``enable_managed_spot_training``, ``stopping_condition.max_runtime_in_seconds``
(the API default is one day, so an absent value is a bound: rules.md
MLC204), ``checkpoint_config.s3_uri`` (what SageMaker syncs
``/opt/ml/checkpoints`` to, and restores on a spot restart),
``input_data_config`` S3 URIs and ``output_data_config.s3_output_path``,
``environment`` (container env), the provider region; ``hyper_parameters``
naming a model is a training config of the job (``sagemaker_hyper``). SageMaker enables EFA
itself on instance types that support it.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.gpu_uses import values_at
from mlcost_lint.model.kept_capacity import count_value
from mlcost_lint.model.kubernetes import EnvVar, Workload
from mlcost_lint.model.managed import SAGEMAKER, DataPath, JobShape, ManagedJob, build_workload
from mlcost_lint.model.sagemaker_hyper import hyper_parameters_config

RESOURCE_TYPE = "aws_sagemaker_training_job"
DEFAULT_MAX_RUNTIME = 86400     # CreateTrainingJob StoppingCondition.MaxRuntimeInSeconds default: 1 day

_INPUT_URI = "input_data_config.data_source.s3_data_source.s3_uri"
_OUTPUT_URI = "output_data_config.s3_output_path"
_CHECKPOINT_URI = "checkpoint_config.s3_uri"


def _loc(resource: CloudResource, path: str) -> Location:
    return resource.loc(path)


def _spot(resource: CloudResource) -> tuple[Any, str, Location | None]:
    value = resource.attrs.get("enable_managed_spot_training")
    if value is None:
        return False, "enable_managed_spot_training not set: on-demand", None
    where = _loc(resource, "enable_managed_spot_training")
    if value is UNKNOWN or not isinstance(value, bool):
        return UNKNOWN, "", where
    return value, f"enable_managed_spot_training = {'true' if value else 'false'}", where


def _runtime(resource: CloudResource) -> tuple[Any, str, Location | None]:
    value = resource.get("stopping_condition.max_runtime_in_seconds")
    if value is None:
        return DEFAULT_MAX_RUNTIME, "no stopping_condition: the SageMaker default of 1 day applies", None
    seconds = count_value(value)
    where = _loc(resource, "stopping_condition.max_runtime_in_seconds")
    if seconds is UNKNOWN or seconds is None:
        return UNKNOWN, "", where
    return seconds, f"stopping_condition.max_runtime_in_seconds = {seconds}", where


def _input_uris(resource: CloudResource) -> list[DataPath]:
    out: list[DataPath] = []
    channels = resource.attrs.get("input_data_config")
    if not isinstance(channels, list):
        return out
    for i, channel in enumerate(channels):
        for uri in values_at(channel, "data_source.s3_data_source.s3_uri"):
            path = f"input_data_config.{i}.data_source.0.s3_data_source.0.s3_uri"
            out.append(DataPath(uri, _loc(resource, path), False, _INPUT_URI))
    return out


def sagemaker_job(resource: CloudResource) -> Workload | None:
    """The training job a resource declares, as a workload (None for other types)."""
    if resource.type != RESOURCE_TYPE or resource.mode != "managed":
        return None
    from mlcost_lint import catalogue

    instance_type = resource.get("resource_config.instance_type")
    accelerator = catalogue.instance_type(instance_type) if isinstance(instance_type, str) else None
    count = count_value(resource.get("resource_config.instance_count"))
    spot, spot_how, spot_at = _spot(resource)
    limit, limit_how, limit_at = _runtime(resource)
    checkpoint = resource.get(_CHECKPOINT_URI)
    data = _input_uris(resource)
    output = resource.get(_OUTPUT_URI)
    if output is not None:
        data.append(DataPath(output, _loc(resource, _OUTPUT_URI), True, _OUTPUT_URI))
    if checkpoint is not None:
        data.append(DataPath(checkpoint, _loc(resource, _CHECKPOINT_URI), True, _CHECKPOINT_URI))
    region = resource.region if isinstance(resource.region, str) else None
    job = ManagedJob(
        service=SAGEMAKER, label="SageMaker training job", name=resource.address, address=resource.address,
        header=resource.location,
        instance_type=instance_type, instance_type_at=_loc(resource, "resource_config.instance_type"),
        accelerator=accelerator,
        instance_count=1 if count is None else count,
        instance_count_at=_loc(resource, "resource_config.instance_count"),
        spot=spot, spot_how=spot_how, spot_at=spot_at,
        runtime_limit=limit, runtime_how=limit_how, runtime_at=limit_at,
        runtime_field="stopping_condition.max_runtime_in_seconds",
        checkpoint_uri=checkpoint if checkpoint is None or isinstance(checkpoint, str) else UNKNOWN,
        checkpoint_at=_loc(resource, _CHECKPOINT_URI) if checkpoint is not None else None,
        checkpoint_field="checkpoint_config.s3_uri",
        data_paths=data,
        region=region, region_how=f"provider of {resource.address}" if region else "",
        region_at=resource.location if region else None,
        rdma_by_service=True,
        resource=resource,
    )
    job.config = hyper_parameters_config(resource, job.title)
    env: dict[str, EnvVar] = {}
    environment = resource.attrs.get("environment")
    if isinstance(environment, dict):
        for name, value in environment.items():
            env[str(name)] = EnvVar(str(name), value if isinstance(value, str) else UNKNOWN,
                                    _loc(resource, f"environment.{name}"))
    return build_workload(job, JobShape(env=env))


def add_sagemaker_jobs(project: Any) -> None:
    for resource in project.terraform.resources:
        workload = sagemaker_job(resource)
        if workload is not None:
            project.kubernetes.workloads.append(workload)
