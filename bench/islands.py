"""How much of a project one file's findings are joined to, by the links
the link stage made (not a benchmark of time).

    python bench/islands.py REPO [REPO ...]

Lints REPO once (no cache) and joins files into components: a workload's
file with the training configs it names and the files of the node pools
and buckets it was linked to; a config with the configs it names; a
Terraform resource's module directory with the module blocks that
instantiate it (Terraform files count by directory, as a root module is
evaluated whole). Prints, per REPO, the number of files and components,
the largest components, and the mean size of the component a file is in
(what a pre-commit run on one file would have to read if the project
context were cut along these links).

It is a lower bound for such a cut, not a design: a link that was *not*
made (an ambiguous node selector, several pools that fit) still depends
on every candidate, and a few rules read the whole project (MLC203 over
every workload of a pool, MLC701 over every budget), so a real cut needs
each linker's candidate keys and each rule's reads.
"""

from __future__ import annotations

import argparse
import collections
import os
from pathlib import Path
from typing import Any


def _path_of(obj: Any) -> str | None:
    for attr in ("location", "document"):
        path = getattr(getattr(obj, attr, None), "path", None)
        if isinstance(path, str) and path:
            return path
    return None


def _unit(path: str | None) -> str | None:
    """A Terraform file counts as its directory (its root module or module)."""
    if path and path.endswith((".tf", ".tf.json", ".tfvars", ".tfvars.json")):
        return os.path.dirname(path) or "."
    return path


class _Components:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: str | None, b: str | None) -> None:
        if a and b:
            self.parent[self.find(a)] = self.find(b)


def islands(repo: Path) -> dict:
    from mlcost_lint.config import load_settings
    from mlcost_lint.discover import discover
    from mlcost_lint.parse_stage import parse_all
    from mlcost_lint.pipeline import LintOptions, build_model

    here = os.getcwd()
    os.chdir(repo)
    try:
        settings = load_settings(None, Path("."))
        found = discover(["."], settings.all_excludes, settings.root)
        parsed = parse_all(found.files, settings, LintOptions(use_cache=False))
        project = build_model(parsed, settings, [], {})
    finally:
        os.chdir(here)
    files = [pf.path for pf in parsed if pf.path]
    comps = _Components()
    for path in files:
        comps.find(_unit(path))
    links = project.links
    for link in links.configs:
        comps.join(_unit(_path_of(link.workload)), _unit(_path_of(link.config)))
    for link in links.pools:
        comps.join(_unit(_path_of(link.workload)), _unit(link.pool.location.path))
    for ref in links.config_refs:
        comps.join(_unit(_path_of(ref.source)), _unit(_path_of(ref.target)))
    for link in links.data_paths:
        if link.bucket is not None:
            comps.join(_unit(_path_of(link.used_by)), _unit(link.bucket.location.path))
    for res in project.terraform.resources:
        for call in res.module_calls or ():
            comps.join(_unit(res.location.path), _unit(call.path))
    sizes = sorted(collections.Counter(comps.find(_unit(p)) for p in files).values(), reverse=True)
    mean = sum(s * s for s in sizes) / len(files) if files else 0.0
    return {"files": len(files), "components": len(sizes), "largest": sizes[:5], "mean_component": mean,
            "links": {k: len(getattr(links, k)) for k in ("configs", "config_refs", "pools", "data_paths")}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repos", nargs="+", type=Path)
    for repo in ap.parse_args().repos:
        r = islands(repo)
        share = r["mean_component"] / r["files"] if r["files"] else 0.0
        print(f"{repo}: {r['files']} files, {r['components']} components, largest {r['largest']}; "
              f"a file's component holds {r['mean_component']:.0f} files on average ({share:.1%}); "
              f"links {r['links']}")


if __name__ == "__main__":
    main()
