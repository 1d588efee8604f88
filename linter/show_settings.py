"""``--show-settings``: the effective configuration, one key per line in
the config file's own spelling, each with where its value came from (the
config file, a command-line option, or the default)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

from mlcost_lint.config import Policy, Settings

# Fields that are not configuration keys.
_INTERNAL = {"source", "root", "origins"}


def render(settings: Settings, searched_from: Path) -> str:
    lines = []
    if settings.source:
        lines.append(f"# config file: {settings.source} (relative globs from {settings.root})")
    else:
        lines.append(f"# config file: none found (searched upward from {searched_from} for "
                     ".mlcost-lint.toml and [tool.mlcost-lint] in pyproject.toml)")
    rows = []
    for f in fields(Settings):
        if f.name in _INTERNAL:
            continue
        value = getattr(settings, f.name)
        key = f.name.replace("_", "-")
        origin = settings.origins.get(f.name, "default")
        if isinstance(value, Policy):
            for pf in fields(Policy):
                sub = getattr(value, pf.name)
                rows.append((f"policy.{pf.name.replace('_', '-')}", _toml(sub), origin if sub is not None else "default"))
            continue
        rows.append((key, _toml(value), origin))
    width = max(len(f"{k} = {v}") for k, v, _ in rows)
    for key, value, origin in rows:
        text = f"{key} = {value}"
        lines.append(f"{text:<{width}}  # {origin}")
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, default=str)
