"""Addresses of resource and module instances, and the reference shadows
(refs.py) that name them.

An instance's address is its resource's (or module call's) followed by its
key: ``aws_s3_bucket.x[0]`` for ``count``, ``aws_s3_bucket.x["a"]`` for
``for_each``, ``[*]`` where the keys are unknown (:data:`UNKNOWN_KEY`). A
reference to a resource refers to its instances by these addresses, a
reference to a data source to its ``data.TYPE.NAME`` address, and in one
instance of a ``for_each`` over references ``each.value`` refers to what that
element refers to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlcost_lint.model.terraform import refs as R

if TYPE_CHECKING:
    from mlcost_lint.model.terraform.declarations import ModuleSource

UNKNOWN_KEY = "*"   # instance key when count/for_each is unknown


def each_refs(each_ref: Any, key: Any) -> dict | None:
    """``each.value``'s shadow for one instance of a for_each over references."""
    if each_ref is None:
        return None
    element = R.get(each_ref, key) if key != UNKNOWN_KEY else R.any_key(each_ref)
    return {"each": R.RMap(value=element)} if element is not None else None


def resource_shadow(base: str, mode: str, keys: list) -> Any:
    """What a reference to a resource refers to: each instance's address, or
    the whole resource (``base``) where the instance cannot be known."""
    whole = frozenset((base,))
    if mode == "single":
        return whole
    if mode == "count":
        return R.RInstances([frozenset((base + instance_suffix(k),)) for k in keys], whole)
    if mode == "for_each" and not (keys and keys[0] == UNKNOWN_KEY):
        return R.RInstances({k: frozenset((base + instance_suffix(k),)) for k in keys}, whole)
    return whole


def data_refs(source: ModuleSource, prefix: str) -> R.RMap:
    """``data.TYPE.NAME`` of the module's data sources, by address (data
    sources are not evaluated: a reference to one names something outside
    the scan's managed resources)."""
    out = R.RMap()
    for d in source.data:
        out.setdefault(d.type, R.RMap())[d.name] = frozenset((f"{prefix}data.{d.type}.{d.name}",))
    return out


def instance_suffix(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, int):
        return f"[{key}]"
    if key == UNKNOWN_KEY:
        return "[*]"
    return '["' + str(key).replace("\\", "\\\\").replace('"', '\\"') + '"]'


__all__ = ["UNKNOWN_KEY", "data_refs", "each_refs", "instance_suffix", "resource_shadow"]
