"""``--verbose``: why the report says what it says. Per file, the kind it
was read as or why it was skipped; per workload, the links made (node pool,
training config, launcher) and, for a GPU workload that no node pool
matched, what ruled each candidate pool out. Lines go to stderr, prefixed
``mlcost-lint: ``; nothing here changes a finding."""

from __future__ import annotations

from typing import Any

from mlcost_lint.discover import Skip
from mlcost_lint.model.read_as import read_as
from mlcost_lint.redact import escape_controls

_SKIP_WHY = {"gitignore": "ignored by .gitignore", "exclude": "excluded by"}


def file_lines(result: Any, report_paths: set[str] | None) -> list[str]:
    lines = []
    for entry in read_as(result.project, report_paths):
        lines.append(f"file {entry.path}: {entry.what}")
    for skip in result.skipped:
        if report_paths is not None and not skip.explicit:
            continue
        lines.append(f"{'folder' if skip.is_dir else 'file'} {skip.display}: {skip_text(skip)}")
    return [escape_controls(line) for line in lines]


def skip_text(skip: Skip) -> str:
    if skip.reason == "gitignore":
        return f"skipped: ignored by .gitignore ({skip.detail})"
    return f"skipped: excluded by '{skip.detail}' (exclude / extend-exclude)"


def workload_lines(project: Any, report_paths: set[str] | None) -> list[str]:
    from mlcost_lint.link.pools import pools_of

    pools = None
    lines = []
    for workload in project.kubernetes.workloads:
        path = workload.document.path
        if report_paths is not None and path not in report_paths:
            continue
        for template in workload.templates:
            where = f"{path}:{template.loc().line}"
            gpus = template.gpu_count()
            role = f" {template.role}" if getattr(template, "role", "") else ""
            head = f"workload {workload.address}{role} ({where})"
            links = _links(project, template)
            if template.holds_accelerators():
                head += f", {gpus if isinstance(gpus, int) else 'an unknown number of'} GPU{'s' if gpus != 1 else ''}"
            lines.append(f"{head}: {'; '.join(links) if links else 'no links'}")
            if template.holds_accelerators() and not project.links.pools_of(template):
                if pools is None:
                    pools = pools_of(project)
                lines.extend(f"  {line}" for line in no_pool_lines(template, pools))
    return [escape_controls(line) for line in lines]


def _links(project: Any, template: Any) -> list[str]:
    out = []
    for link in project.links.pools_of(template):
        block = f".{link.block}" if link.block else ""
        out.append(f"node pool {link.pool.address}{block} ({link.how})")
    for link in project.links.configs:
        if link.template is template:
            out.append(f"training config {link.config.path} ({link.how})")
    for launch in project.links.launches:
        if launch.template is template:
            ranks = launch.ranks_text or (f"{launch.ranks_per_node} ranks per node"
                                          if isinstance(launch.ranks_per_node, int) else "")
            out.append(f"launcher {launch.launcher}" + (f" ({ranks})" if ranks else ""))
    return out


def no_pool_lines(template: Any, pools: list[Any]) -> list[str]:
    """Why no node group / pool was linked: one line per candidate."""
    from mlcost_lint.model.scheduling import selector_of

    if not pools:
        return ["no node pool matched: the scan has no Terraform node group / pool or Karpenter NodePool"]
    sel = selector_of(template)
    lines = ["no node pool matched:"]
    for pool in pools[:20]:
        lines.append(f"  {pool.address}: {why_not(template, sel, pool)}")
    if len(pools) > 20:
        lines.append(f"  ... and {len(pools) - 20} more pools")
    return lines


def why_not(template: Any, sel: Any, pool: Any) -> str:
    from mlcost_lint.link.pools import _implicitly_tolerated, _tolerates, match_pool, tolerates_all
    from mlcost_lint.model.scheduling import INSTANCE_TYPE_LABELS, Selector
    from mlcost_lint.model.core import UNKNOWN

    for key, pair in sel.pairs.items():
        if match_pool(Selector(pairs={key: pair}), pool).contradicted:
            if key in INSTANCE_TYPE_LABELS:
                have = ", ".join(pool.node_types) if isinstance(pool.node_types, list) else "unknown"
                return f"{pair[2]} rules it out (its instance types: {have})"
            have = pool.labels.get(key)
            return f"{pair[2]} rules it out" + (f" (it has {key}={have})" if isinstance(have, str) else
                                                  f" (it does not carry {key})")
    if pool.taints is UNKNOWN:
        return "its taints cannot be known, so it may not accept the pod"
    for taint in pool.taints:
        if _implicitly_tolerated(template, pool, taint):
            continue
        if _tolerates(template, taint) is False:
            value = f"={taint.value}" if isinstance(taint.value, str) and taint.value else ""
            return f"taint {taint.key}{value}:{taint.effect} is not tolerated"
    if tolerates_all(template, pool) is None:
        return "a taint of it is unknown"
    if match_pool(sel, pool).identifying:
        return "it matches, but so does another pool (ambiguous: nothing linked)"
    if not sel.pairs:
        return "the pod has no nodeSelector / node affinity naming it, and no toleration picks it alone"
    missing = [f"{key}={value}" for key, (value, _loc, _src) in sel.pairs.items() if key not in pool.labels]
    if missing:
        return f"it does not carry the label{'s' if len(missing) > 1 else ''} {', '.join(missing)} the pod selects"
    return "nothing in the selector names it (" + ", ".join(p[2] for p in sel.pairs.values()) + ")"
