"""What a Terraform value refers to, carried beside the value as it is evaluated.

The evaluator computes, for every expression, the value and a *shadow*: the
resource addresses the value is taken from unchanged (``aws_s3_bucket.ckpt.id``,
``local.bucket_id`` when that local is ``aws_s3_bucket.ckpt.id``, ``var.bucket_id``
when the module call passed it). Computed attributes are UNKNOWN, a singleton
that cannot carry anything, so the reference travels beside the value instead.

A shadow is one of:

- ``None``: the value refers to no resource (a literal, arithmetic, a string
  built from pieces: ``"${aws_s3_bucket.x.id}-logs"`` is not that bucket);
- a ``frozenset`` of addresses: the value, and any part of it, comes from
  these (``aws_s3_bucket.x`` seen whole, ``aws_s3_bucket.x.id``);
- :class:`RMap` / :class:`RList`: an object or tuple whose elements have
  their own shadows (``{a = aws_s3_bucket.a.id, b = aws_s3_bucket.b.id}``),
  so ``local.ids["a"]`` refers to bucket ``a`` only;
- :class:`RInstances`: a resource or module call with ``count``/``for_each``,
  its instances by key; an index that is not known refers to ``whole``.

Every operation here is O(1) per step except :func:`flat`, which is cached
on the shadow object, so carrying shadows keeps evaluation linear.
"""

from __future__ import annotations

from typing import Any


class RMap(dict):
    """Shadow of an object/map (or a namespace: ``var``, ``local``, a resource type)."""

    __slots__ = ("flat_cache",)


class RList(list):
    """Shadow of a tuple/list."""

    __slots__ = ("flat_cache",)


class RInstances:
    """Shadow of a resource or module call with instances: ``items`` by key
    (a list for count, a dict for for_each). ``whole`` is what an unknown key
    refers to: the resource's own address for resources, or None for "any
    instance" (the union of the items)."""

    __slots__ = ("items", "whole", "flat_cache")

    def __init__(self, items: list | dict, whole: Any = None) -> None:
        self.items = items
        self.whole = whole


_EMPTY: frozenset = frozenset()


def get(shadow: Any, key: Any) -> Any:
    """The shadow of ``value.key`` / ``value[key]`` for a known key."""
    if shadow is None:
        return None
    t = type(shadow)
    if t is frozenset:
        return shadow
    if t is RMap:
        return shadow.get(key if type(key) is str else _key_string(key))
    if t is RList:
        idx = _key_int(key)
        return shadow[idx] if idx is not None and 0 <= idx < len(shadow) else None
    if t is RInstances:
        items = shadow.items
        if type(items) is list:
            idx = _key_int(key)
            if idx is not None and 0 <= idx < len(items):
                return items[idx]
        else:
            hit = items.get(key if type(key) is str else _key_string(key))
            if hit is not None:
                return hit
        return any_key(shadow)
    return None


def any_key(shadow: Any) -> Any:
    """The shadow of ``value[k]`` when ``k`` is not known."""
    if shadow is None or type(shadow) is frozenset:
        return shadow
    if type(shadow) is RInstances and shadow.whole is not None:
        return shadow.whole
    return flat(shadow) or None


def flat(shadow: Any) -> frozenset:
    """Every address a shadow holds (an instance container counts as its
    ``whole`` when it has one: a reference to the whole resource)."""
    if shadow is None:
        return _EMPTY
    t = type(shadow)
    if t is frozenset:
        return shadow
    cached = getattr(shadow, "flat_cache", None)
    if cached is not None:
        return cached
    if t is RInstances and shadow.whole is not None:
        out = flat(shadow.whole)
    else:
        parts = shadow.items.values() if t is RInstances and type(shadow.items) is dict else (
            shadow.items if t is RInstances else (shadow.values() if t is RMap else shadow))
        acc: set = set()
        for p in parts:
            if p is not None:
                acc |= flat(p)
        out = frozenset(acc)
    shadow.flat_cache = out
    return out


def union(shadows: list) -> Any:
    """One shadow for a value that may be any of several (``coalesce``, an
    unknown condition): the union of their addresses, or None."""
    acc: set = set()
    for s in shadows:
        if s is not None:
            acc |= flat(s)
    return frozenset(acc) if acc else None


def _key_int(key: Any) -> int | None:
    if type(key) is int:
        return key
    if type(key) is float and key.is_integer():
        return int(key)
    if type(key) is str:
        try:
            return int(key)
        except ValueError:
            return None
    return None


def _key_string(key: Any) -> str | None:
    if type(key) is bool:
        return "true" if key else "false"
    if type(key) in (int, float):
        from mlcost_lint.model.terraform.values import number_to_string

        return number_to_string(key)
    return None


def tidy(shadow: Any) -> tuple[str, ...]:
    """The addresses a top-level argument refers to, in a stable order."""
    return tuple(sorted(flat(shadow)))


__all__ = ["RMap", "RList", "RInstances", "get", "any_key", "flat", "union", "tidy"]
