from __future__ import annotations

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.managed import per_node_job

import re
from typing import Any, Iterator

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Location, Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.model.gpu_uses import gpu_uses
from mlcost_lint.model.scheduling import pinned_gpu

# ---------------------------------------------------------------- regions ---

# AWS resource types that are global (no region), by prefix; everything else
# in the AWS provider is regional.
_AWS_GLOBAL_PREFIXES = (
    "aws_iam_", "aws_budgets_", "aws_organizations_", "aws_cloudfront_", "aws_ce_",
    "aws_shield_", "aws_globalaccelerator_", "aws_waf_", "aws_account_", "aws_route53_",
    "aws_costoptimizationhub_", "aws_cur_",
)
_AWS_REGIONAL_EXCEPTIONS = ("aws_route53_resolver_",)
# Google types that take their location from the provider when not written.
_GOOGLE_PROVIDER_LOCATED = {
    "google_compute_instance", "google_compute_disk", "google_compute_subnetwork",
    "google_compute_address", "google_compute_router", "google_compute_router_nat",
    "google_compute_instance_group_manager", "google_compute_region_instance_template",
    "google_compute_region_instance_group_manager", "google_tpu_v2_vm", "google_tpu_node",
    "google_container_cluster", "google_container_node_pool", "google_sql_database_instance",
    "google_redis_instance", "google_dataproc_cluster", "google_filestore_instance",
}
_LOCATION_ARGS = ("region", "zone", "location", "availability_zone")
_GLOBAL_VALUES = {"global", ""}

_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")
_AWS_ZONE = re.compile(r"^([a-z]{2}(?:-gov)?-[a-z]+-\d)[a-z]$")
_AZURE_ZONE = re.compile(r"^([a-z]+[a-z0-9]*)-\d$")


def norm_region(value: str) -> str:
    """Case- and space-insensitive: "East US" == "eastus", "US-CENTRAL1" == "us-central1"."""
    return re.sub(r"\s+", "", value).lower()


def zone_region(zone: str) -> str | None:
    z = norm_region(zone)
    for pattern in (_GCP_ZONE, _AWS_ZONE, _AZURE_ZONE):
        m = pattern.match(z)
        if m:
            return m.group(1)
    return None


def _own_location(r: CloudResource) -> tuple[str, str] | None:
    """(argument, region) when the resource writes its own location."""
    for arg in _LOCATION_ARGS:
        value = r.attrs.get(arg)
        if isinstance(value, str) and value.strip():
            if arg in ("zone", "availability_zone") or (arg == "location" and zone_region(value)
                                                        and r.provider == "google"
                                                        and r.type != "google_storage_bucket"):
                region = zone_region(value)
                if region is None:
                    continue
                return arg, region
            return arg, norm_region(value)
    return None


def resource_region(r: CloudResource) -> tuple[str | None, str] | None:
    """(argument or None when from the provider, normalised region) of a
    regional resource with a known region; None for global or unknown."""
    if r.mode != "managed":
        return None
    t = r.type
    if r.provider == "aws" and t.startswith(_AWS_GLOBAL_PREFIXES) and not t.startswith(_AWS_REGIONAL_EXCEPTIONS):
        return None
    if r.provider not in ("aws", "google", "azurerm"):
        return None
    own = _own_location(r)
    if own is not None:
        return None if own[1] in _GLOBAL_VALUES else own
    if r.provider == "azurerm":
        return None      # an Azure resource without its own location (subnets, roles, ...)
    if r.provider == "google" and t not in _GOOGLE_PROVIDER_LOCATED:
        return None      # most Google types without a location argument are global
    region = r.region
    if not isinstance(region, str) or not region.strip():
        return None
    return None, norm_region(zone_region(region) or region)


# -------------------------------------------------------------- Kubernetes ---

_REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def _selector_region(selector: dict[str, Any]) -> tuple[str, str] | None:
    for key in _REGION_LABELS:
        value = selector.get(key)
        if isinstance(value, str) and value:
            return key, norm_region(value)
    for key in _ZONE_LABELS:
        value = selector.get(key)
        if isinstance(value, str) and value:
            region = zone_region(value)
            if region:
                return key, region
    return None


@dataclass(slots=True)
class _Policy:
    gpu_types: list[str] | None
    max_gpus: int | None
    regions: list[str] | None


class PolicyViolation(Rule):
    """
    ## What it does
    Checks the organisation's `[policy]` from the config file: a GPU whose
    model is not in `allowed-gpu-types` (entries may be GPU models such as
    `L4`/`H100`, cloud accelerator names such as `nvidia-l4`, or
    instance/machine types; each resolves through the accelerator catalogue
    and a bare family matches all its variants); a Kubernetes job requesting
    more than `max-gpus-per-job` GPUs over all its replicas; a regional
    resource (or a workload pinned to a region or zone) outside
    `allowed-regions` (a zone counts as its region; a GCS multi-region such
    as `US` is allowed only when listed itself). Silent when no policy is set.

    ## Why is this expensive
    Policies encode negotiated discounts, reservations and data-residency
    limits. An H100 pool in a project that has committed use for L4s, or a
    cluster in a region without a reservation, is paid at list price on top
    of the commitment.

    ## Example
    ```toml
    [policy]
    allowed-gpu-types = ["L4", "A100"]
    allowed-regions = ["us-central1"]
    ```
    ```hcl
    resource "google_container_node_pool" "train" {
      location = "europe-west4"
      node_config { machine_type = "a3-highgpu-8g" }
    }
    ```

    ## Fix
    Use an allowed GPU type and region, or change the policy through the
    owners of the config file.
    """

    code = "MLC702"
    name = "policy-violation"
    level = Level.ERROR
    confidence = Confidence.HIGH
    category = Category.GOVERNANCE
    reports_in = frozenset({Reports.CLOUD, Reports.WORKLOAD})
    summary = "Organisation policy broken: GPU type, GPU count or region"
    fix = "Use an allowed GPU type / region, or fewer GPUs per job."

    def check(self, project, settings) -> Iterator[Finding]:
        p = settings.policy
        policy = _Policy(p.allowed_gpu_types or None, p.max_gpus_per_job, p.allowed_regions or None)
        if policy.gpu_types is None and policy.max_gpus is None and policy.regions is None:
            return
        if policy.gpu_types is not None:
            yield from self._terraform_gpu_types(project, policy.gpu_types)
            yield from self._kubernetes_gpu_types(project, policy.gpu_types)
        if policy.max_gpus is not None:
            yield from self._max_gpus(project, policy.max_gpus)
        if policy.regions is not None:
            yield from self._regions(project, policy.regions)

    # -- allowed-gpu-types -------------------------------------------------
    @staticmethod
    def _allowed(model: Any, entries: list[str]) -> tuple[bool, list[str]]:
        from mlcost_lint.catalogue import gpu_model_matches

        unknown = []
        for entry in entries:
            verdict = gpu_model_matches(entry, model)
            if verdict is True:
                return True, []
            if verdict is None:
                unknown.append(entry)
        return False, unknown

    def _gpu_message(self, what: str, model: Any, entries: list[str], unknown: list[str]) -> str:
        note = f" (not in the accelerator catalogue: {', '.join(unknown)})" if unknown else ""
        return (f"{what} uses {model.name} GPUs, not in allowed-gpu-types "
                f"[{', '.join(entries)}]{note}; use an allowed GPU type")

    def _terraform_gpu_types(self, project, entries: list[str]) -> Iterator[Finding]:
        for r in project.terraform.cloud_only_resources():    # findings at the resources
            reported: set[str] = set()
            for use in gpu_uses(r):
                if use.model.name in reported:
                    continue
                ok, unknown = self._allowed(use.model, entries)
                if ok:
                    continue
                reported.add(use.model.name)
                yield self.finding(
                    self._gpu_message(f"{r.address} ({use.written})", use.model, entries, unknown),
                    use.location, r.address,
                    related=r.related_module_calls(), object_line=r.location.line)

    def _kubernetes_gpu_types(self, project, entries: list[str]) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            for template in workload.gpu_templates():
                model = pinned_gpu(template.node_selector)
                evidence = template.spec_loc("nodeSelector")
                related: list[Related] = []
                job = workload.managed
                if job is not None:      # a managed-service job names its capacity itself
                    if job.accelerator is None or (job.resource is not None and gpu_uses(job.resource)):
                        continue         # no GPU, or the Terraform resource it comes from is judged above
                    if job.gpus_written is not None:
                        # A job file that names its GPU per node (SkyPilot accelerators / instance_type).
                        model, evidence = job.accelerator.gpu, job.gpus_written.location
                        role = f" ({job.gpus_written.written})"
                        ok, unknown = self._allowed(model, entries)
                        if not ok:
                            yield self.finding(self._gpu_message(f"{job.title}{role}", model, entries, unknown),
                                               evidence, workload.address, object_line=job.header.line)
                        continue
                    model, evidence = job.accelerator.gpu, job.instance_type_at or job.header
                    if isinstance(job.instance_type, str) and job.instance_type:
                        related = [Related(evidence, f"instance type {job.instance_type}")]
                if model is None:
                    for link in project.links.pools_of(template):
                        uses = gpu_uses(link.pool)
                        models = {u.model.name: u for u in uses}
                        if len(models) == 1:
                            use = next(iter(models.values()))
                            model = use.model
                            evidence = link.evidence
                            related = [Related(use.location, f"node pool {link.pool.address} ({use.written})")]
                            break
                if model is None:
                    continue
                ok, unknown = self._allowed(model, entries)
                if ok:
                    continue
                role = f" {template.role}" if template.role else ""
                yield self.finding(
                    self._gpu_message(f"{workload.kind} {workload.name}{role}", model, entries, unknown),
                    evidence, f"{workload.address}/{template.role or 'template'}",
                    related=related, object_line=template.loc().line)

    # -- max-gpus-per-job --------------------------------------------------
    def _max_gpus(self, project, limit: int) -> Iterator[Finding]:
        for workload in project.kubernetes.workloads:
            known_total = 0
            exact = True
            parts: list[str] = []
            first_loc: Location | None = None
            for template in workload.templates:
                per_pod = template.gpu_count()
                replicas = 1 if template.replicas is None else template.replicas
                if per_pod is UNKNOWN or replicas is UNKNOWN:
                    exact = False
                    continue
                if per_pod <= 0:
                    continue
                known_total += per_pod * replicas
                unit = "nodes" if per_node_job(workload) is not None else "instances" if workload.managed else "pod"
                parts.append(f"{template.role or unit} {replicas} x {per_pod}")
                if first_loc is None:
                    first_loc = _gpu_request_location(template)
            if known_total <= limit or first_loc is None:
                continue
            bound = "" if exact else "at least "
            yield self.finding(
                f"{workload.kind} {workload.name} requests {bound}{known_total} GPUs over all "
                f"{'nodes' if per_node_job(workload) is not None else 'replicas'} "
                f"({', '.join(parts)}), above max-gpus-per-job {limit}; split the job or lower its "
                f"{'nodes or GPUs per node' if per_node_job(workload) is not None else 'replicas or GPUs per pod'}",
                first_loc, workload.address, object_line=workload.loc().line)

    # -- allowed-regions ---------------------------------------------------
    def _regions(self, project, allowed: list[str]) -> Iterator[Finding]:
        wanted = {norm_region(a) for a in allowed}
        shown = ", ".join(allowed)
        by_provider: dict[tuple[str, str], list[CloudResource]] = {}
        for r in project.terraform.cloud_only_resources():    # findings at the resources or their providers
            found = resource_region(r)
            if found is None:
                continue
            arg, region = found
            if region in wanted:
                continue
            if arg is None:
                by_provider.setdefault((r.provider, region), []).append(r)
                continue
            yield self.finding(
                f"{r.address} is in {r.attrs.get(arg)} ({arg}), not in allowed-regions [{shown}]; "
                "move it to an allowed region",
                r.loc(arg) if arg in r.attr_locations else r.location, r.address,
                related=r.related_module_calls(), object_line=r.location.line)
        for (provider_name, region), resources in by_provider.items():
            provider = next((p for p in project.terraform.providers if p.name == provider_name
                             and isinstance(p.region, str) and norm_region(p.region) == region), None)
            if provider is None:
                for r in resources:
                    yield self.finding(
                        f"{r.address} is in region {region}, not in allowed-regions [{shown}]; "
                        "move it to an allowed region",
                        r.location, r.address, related=r.related_module_calls(), object_line=r.location.line)
                continue
            names = ", ".join(r.address for r in resources[:5]) + (
                f" and {len(resources) - 5} more" if len(resources) > 5 else "")
            alias = f" (alias {provider.alias})" if provider.alias else ""
            yield self.finding(
                f"provider {provider_name}{alias} region {provider.region} is not in allowed-regions "
                f"[{shown}]; {len(resources)} resource{'s use' if len(resources) > 1 else ' uses'} it: {names}",
                provider.location,
                f"provider.{provider_name}" + (f".{provider.alias}" if provider.alias else ""),
                related=[Related(r.location, f"{r.address} uses this provider") for r in resources[:10]],
                object_line=provider.location.line)
        for workload in project.kubernetes.workloads:
            job = workload.managed
            if job is not None and job.resource is None and isinstance(job.region, str) and job.region_at is not None:
                # A job file that names its own region (SkyPilot resources.infra / region).
                if norm_region(job.region) not in wanted:
                    yield self.finding(
                        f"{job.title} runs in region {job.region} ({job.region_how}), not in allowed-regions "
                        f"[{shown}]; move it to an allowed region",
                        job.region_at, workload.address, object_line=job.header.line)
                continue
            for template in workload.templates:
                found = _selector_region(template.node_selector)
                if found is None or found[1] in wanted:
                    continue
                key, region = found
                role = f" {template.role}" if template.role else ""
                pinned = f"region {region} ({key})" if key in _REGION_LABELS else \
                    f"zone {template.node_selector[key]} ({key}), region {region},"
                yield self.finding(
                    f"{workload.kind} {workload.name}{role} is pinned to {pinned} not in "
                    f"allowed-regions [{shown}]",
                    template.spec_loc("nodeSelector", key),
                    f"{workload.address}/{template.role or 'template'}", object_line=template.loc().line)


def _gpu_request_location(template) -> Location:
    """Where the first container that requests accelerators asks for them."""
    for c in template.containers:
        n = c.gpu_count()
        if n is not UNKNOWN and n > 0:
            return c.loc(*c.gpu_resource_path())
    return template.loc()
