"""Cloud resources from Terraform (configuration or plan), after evaluation."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Location, Maybe, Related, Unknown
from mlcost_lint.pickling import pickled_by_fields


@pickled_by_fields
@dataclass(slots=True)
class CloudResource:
    """One resource instance (``count``/``for_each`` expanded), or a synthetic
    one read from a registry module's inputs (an EKS module's node group).

    ``attrs`` holds evaluated argument values in plan-JSON shape: arguments as
    values, nested blocks as lists of dicts under the block type. Any value
    may be UNKNOWN. ``attr_locations`` maps dotted argument paths
    (``"tags"``, ``"scaling_config.min_size"``, ``"lifecycle_rule"``) to where
    they are written; :meth:`loc` falls back to the block itself.
    """

    type: str                      # "aws_eks_node_group"
    name: str                      # "gpu"
    address: str                   # "module.gpu.aws_eks_node_group.this[0]"
    provider: str                  # "aws" | "google" | "azurerm" | other prefix
    location: Location             # the resource block (or module call) start
    attrs: dict[str, Any] = field(default_factory=dict)
    attr_locations: dict[str, Location] = field(default_factory=dict)
    # Effective cost tags/labels after provider default_tags/default_labels:
    # None when the resource type takes no tags, UNKNOWN when they cannot be known.
    tags: Maybe[dict[str, Any]] | None = None
    tags_attribute: str = "tags"   # which argument carries them (tags, labels, resource_labels)
    # A registry module's resource: the module-call inputs that set its tags
    # (GKE: cluster_resource_labels, node_pools_resource_labels).
    tag_inputs: tuple[str, ...] = ()
    # A registry module's resource: argument path -> the module-call input that
    # sets it ({"lifecycle_rule": "lifecycle_rule"}), so a fix names the input.
    module_inputs: dict[str, str] = field(default_factory=dict)
    # In a child module called from the scan: argument path -> the caller's
    # argument (or module block) that sets it through a module variable.
    input_locations: dict[str, Location] = field(default_factory=dict)
    # The launch template whose capacity reservation target this group runs
    # on (an ODCR): reserved capacity (model.terraform.mark_capacity_reservations).
    reserved_by: str | None = None
    region: Maybe[str] = UNKNOWN   # region (zone resolved to its region) or GCS multi-region
    zone: Maybe[str] | None = None
    module_calls: tuple[Location, ...] = ()   # the module blocks that led here, outermost first
    origin: str = "terraform"      # "terraform" | "plan" | "module-input"
    mode: str = "managed"          # "managed" | "data"
    # The provider configuration it uses: "aws", "aws.west" (after module `providers` mapping
    # this is the key inside the resource's own module).
    provider_key: str = ""
    # Dotted argument path -> addresses of the resources its value is taken from unchanged,
    # through locals, module variables and outputs: {"bucket": ('aws_s3_bucket.ckpt["a"]',)}.
    # An instance address where the instance is known, the whole resource
    # ("aws_s3_bucket.ckpt", "module.m.aws_s3_bucket.x") where it is not; data sources as
    # "data.TYPE.NAME". Filled by the evaluator (and from a plan's configuration); an
    # argument that refers to no resource has no entry. Nested block arguments appear
    # indexed ("rule.0.filter.prefix") and, for the first block, unindexed.
    references: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def loc(self, attr_path: str | None = None) -> Location:
        if attr_path:
            parts = attr_path.split(".")
            while parts:
                hit = self.attr_locations.get(".".join(parts))
                if hit is not None:
                    return hit
                parts.pop()
        return self.location

    def get(self, attr_path: str, default: Any = None) -> Any:
        """Read a dotted path through arguments and (first) nested blocks.
        UNKNOWN on the way yields UNKNOWN; a missing key yields ``default``."""
        node: Any = self.attrs
        for part in attr_path.split("."):
            if node is UNKNOWN:
                return UNKNOWN
            if isinstance(node, list):
                if not node:
                    return default
                node = node[0]
                if node is UNKNOWN:
                    return UNKNOWN
            if isinstance(node, dict):
                if part not in node:
                    return default
                node = node[part]
            else:
                return default
        return node

    def related_module_calls(self) -> tuple[Related, ...]:
        return tuple(Related(loc, "called from this module block") for loc in self.module_calls)


@pickled_by_fields
@dataclass(slots=True)
class ProviderConfig:
    """A provider block (one per alias) with what rules need from it."""

    name: str                      # "aws"
    alias: str | None
    location: Location
    region: Maybe[str] | None = None
    default_tags: Maybe[dict[str, Any]] | None = None  # AWS default_tags / Google default_labels
    zone: Maybe[str] | None = None  # Google provider zone
    module_calls: tuple[Location, ...] = ()   # set when the block is inside a child module


@pickled_by_fields
@dataclass(slots=True)
class ModuleCall:
    """A `module` block as written (once, whatever its count/for_each): rules
    that care about modules whose resources are not in the model (remote
    sources) read these instead of the parse tree."""

    address: str                   # "module.budgets" (with parent module prefixes)
    source: str | None             # the literal source, None when not a literal
    location: Location


@dataclass(slots=True)
class TerraformModel:
    resources: list[CloudResource] = field(default_factory=list)
    providers: list[ProviderConfig] = field(default_factory=list)
    module_calls: list[ModuleCall] = field(default_factory=list)
    # Problems evaluation hit (cycles, step limit): reported as MLC001 by path.
    diagnostics: list[tuple[Location, str]] = field(default_factory=list)
    # Secret-looking values already taken from some resources' evaluated
    # values (a cached root's, found when it was evaluated), and the ids of
    # those resources: secrets.collect_secrets walks only the others.
    known_secrets: set[str] = field(default_factory=set)
    secrets_taken: set[int] = field(default_factory=set)
    # The summary a sliced run reads (mlcost_lint.project_slice): such a run
    # reports in no Terraform file, and the resources no workload-side check
    # reads are stand-ins (model.absent), so a check whose findings are all
    # in Terraform files passes over them (cloud_only_resources).
    partial: bool = False

    def cloud_only_resources(self) -> list[CloudResource]:
        """The resources for a check that reports only where they are written."""
        return [] if self.partial else self.resources

    def of_type(self, *types: str) -> list[CloudResource]:
        wanted = set(types)
        return [r for r in self.resources if r.type in wanted]


def resource_provider(resource_type: str) -> str:
    return resource_type.split("_", 1)[0]


__all__ = ["CloudResource", "ModuleCall", "ProviderConfig", "TerraformModel", "resource_provider", "Unknown"]
