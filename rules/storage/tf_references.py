"""Which resources an argument of a Terraform resource refers to, from the model.

The evaluator records, per argument, the addresses of the resources its value
is taken from (``CloudResource.references``): through locals, module
variables and outputs, ``each.value``, ``try``/``coalesce`` and conditionals,
with the instance where the key is known. Plans get the same from their
``configuration`` section, ``.tf.json`` from the same evaluator. This module
only resolves those addresses to the scan's resources; it never reads files
or parse trees. Used by the storage rules (MLC303-305, through buckets.py)
and MLC401 (``root_of``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from mlcost_lint.model.cloud import CloudResource

_INDEX_SUFFIX = re.compile(r"\[[^\[\]]*\]$")

# One index per project; the engine runs every rule on the same Project object.
_cache: dict[int, tuple[Any, dict[tuple[str, str], list[CloudResource]]]] = {}


def base_address(address: str) -> str:
    """``module.a[0].aws_s3_bucket.x["k"]`` -> ``module.a[0].aws_s3_bucket.x``."""
    return _INDEX_SUFFIX.sub("", address)


def root_of(resource: CloudResource) -> str:
    """The folder of the root module a resource instance was evaluated from
    (the outermost module call's file, or its own file): resources of
    different roots are different deployments and never refer to each other."""
    path = resource.module_calls[0].path if resource.module_calls else resource.location.path
    return path.rsplit("/", 1)[0] if "/" in path else ""


def deployment_of(resource: CloudResource) -> str:
    """What a reference can reach: the root module's folder, or the plan file
    (a plan next to its configuration repeats the same addresses)."""
    if resource.origin == "plan":
        return "plan:" + resource.location.path
    return root_of(resource)


def _index(project: Any) -> dict[tuple[str, str], list[CloudResource]]:
    """(deployment, address) -> the resources it names: an instance address
    names that instance; a resource address (no instance key) names every
    instance, including the one standing for unknown keys (``[*]``)."""
    hit = _cache.get(id(project))
    if hit is not None and hit[0] is project:
        return hit[1]
    by_address: dict[tuple[str, str], list[CloudResource]] = {}
    for r in project.terraform.resources:
        where = deployment_of(r)
        by_address.setdefault((where, r.address), []).append(r)
        base = base_address(r.address)
        if base != r.address:
            by_address.setdefault((where, base), []).append(r)
    _cache.clear()
    _cache[id(project)] = (project, by_address)
    return by_address


def _strip_keys(address: str) -> str:
    out = []
    depth = 0
    quoted = False
    for ch in address:
        if quoted:
            if ch == '"':
                quoted = False
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth and ch == '"':
            quoted = True
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def address_type(address: str) -> tuple[str, bool]:
    """(resource type, is a data source) of a resource or instance address."""
    parts = _strip_keys(address).split(".")
    if len(parts) < 2:
        return "", False
    return parts[-2], len(parts) >= 3 and parts[-3] == "data"


def referenced(project: Any, resource: CloudResource, attr_path: str,
               target_types: Iterable[str]) -> list[CloudResource] | None:
    """The resources of ``target_types`` that argument ``attr_path`` of
    ``resource`` refers to (``CloudResource.references``).

    None when the argument refers to no resource of those types: no
    reference at all (a literal, a variable without a resource behind it),
    or only to resources of other types. A list otherwise, empty when the
    resource it names is not in the scan: a data source of a target type (a
    bucket managed elsewhere) or a resource with no instances.
    """
    addresses = resource.references.get(attr_path)
    if not addresses:
        return None
    wanted = set(target_types)
    by_address = _index(project)
    where = deployment_of(resource)
    out: list[CloudResource] = []
    seen: set[int] = set()
    named = False
    for address in addresses:
        rtype, is_data = address_type(address)
        if rtype not in wanted:
            continue
        named = True
        if is_data:
            continue
        for target in by_address.get((where, address), ()):
            if target.type in wanted and target.mode == "managed" and id(target) not in seen:
                seen.add(id(target))
                out.append(target)
    return out if named else None


__all__ = ["address_type", "base_address", "deployment_of", "referenced", "root_of"]
