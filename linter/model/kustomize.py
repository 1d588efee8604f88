"""Kustomize patches are fragments, not workloads (rules.md, Settled
questions): a file named in a ``kustomization.yaml``'s ``patches`` /
``patchesStrategicMerge`` / ``patchesJson6902`` in the scan, or a workload
with no container image and no selector in a folder that has a
kustomization, is merged into a base later. The rules never see it.

Only what the kustomization says is read; ``kustomize build`` is never run."""

from __future__ import annotations

import posixpath
from typing import Any, Iterable

from mlcost_lint.model.kubernetes import KubernetesModel, Workload
from mlcost_lint.parse.document import ParsedFile

KUSTOMIZATION_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
_PATCH_KEYS = ("patchesStrategicMerge", "patches", "patchesJson6902")


def _patch_paths(data: Any) -> Iterable[str]:
    if not isinstance(data, dict):
        return
    for key in _PATCH_KEYS:
        entries = data.get(key)
        if not isinstance(entries, list):
            continue
        for entry in entries:
            path = entry.get("path") if isinstance(entry, dict) else entry
            # An inline patch (a YAML string with a newline) names no file.
            if isinstance(path, str) and path.strip() and "\n" not in path:
                yield path.strip()


def _selectorless_without_image(workload: Workload) -> bool:
    if "selector" in workload.spec:
        return False
    containers = [c for t in workload.templates for c in t.containers]
    return bool(containers) and all(not c.image for c in containers)


def split_fragments(model: KubernetesModel, files: list[ParsedFile]) -> None:
    """Move Kustomize patches from ``model.workloads`` to ``model.fragments``."""
    patches: set[str] = set()
    folders: set[str] = set()
    for pf in files:
        if posixpath.basename(pf.path) not in KUSTOMIZATION_NAMES:
            continue
        folder = posixpath.dirname(pf.path)
        folders.add(folder)
        for doc in pf.documents:
            for path in _patch_paths(doc.data):
                patches.add(posixpath.normpath(posixpath.join(folder, path)))
    if not folders:
        return
    kept: list[Workload] = []
    for workload in model.workloads:
        path = posixpath.normpath(workload.document.path)
        if path in patches or (posixpath.dirname(path) in folders and _selectorless_without_image(workload)):
            model.fragments.append(workload)
        else:
            kept.append(workload)
    model.workloads = kept
