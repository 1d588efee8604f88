"""Configuration: `.mlcost-lint.toml` or `[tool.mlcost-lint]` in pyproject.toml,
validated against ``config_schema.json``; merged with command-line options
into one :class:`Settings` that every stage reads."""

from __future__ import annotations

import json
import sys
from dataclasses import field
from pathlib import Path
from typing import Any

from mlcost_lint.lean_dataclass import dataclass

CONFIG_FILE = ".mlcost-lint.toml"
# The keys MLC101/MLC102 check when they are selected without `required-tags`.
SUGGESTED_TAGS = ("team", "project", "cost-center")


class ConfigError(Exception):
    """A configuration problem: exit 2 with this one-line message."""


@dataclass(slots=True)
class Policy:
    allowed_gpu_types: list[str] | None = None
    max_gpus_per_job: int | None = None
    allowed_regions: list[str] | None = None


@dataclass(slots=True)
class Settings:
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    # Discovery skips what .gitignore / .git/info/exclude ignore (product.md, v2 additions).
    respect_gitignore: bool = True
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    # None: not configured, so MLC101/MLC102 are off unless selected (then
    # they use SUGGESTED_TAGS). rules.md, "The default set (v2)".
    required_tags: list[str] | None = None
    require_budget: bool = False
    max_log_retention_days: int = 365
    min_checkpoint_interval_steps: int = 100
    max_checkpoints_per_run: int = 200
    max_job_backoff_limit: int = 6
    oversized_gpu_memory_fraction: float = 0.25
    default_region: str | None = None
    bucket_regions: dict[str, str] = field(default_factory=dict)
    policy: Policy = field(default_factory=Policy)
    # [prices] (rules.md, "Cost estimates"): a fraction off list prices, and
    # a CSV / SkyPilot vms.csv whose rows replace the shipped ones.
    prices_discount: float = 0.0
    prices_file: Path | None = None
    # Resource bounds for hostile input (product.md, Bad input).
    max_file_size_mb: float = 5.0
    max_nesting_depth: int = 500
    max_evaluation_steps: int = 2_000_000
    # Where the config came from (for messages), and its folder (for relative globs).
    source: str | None = None
    root: Path = field(default_factory=Path.cwd)
    # Where each value came from (--show-settings): field name -> the config
    # file or the command-line option; absent means the default.
    origins: dict[str, str] = field(default_factory=dict)

    @property
    def tag_keys(self) -> list[str]:
        """The tag/label keys MLC101/MLC102 require: the configured ones, else the suggested ones."""
        return list(self.required_tags) if self.required_tags is not None else list(SUGGESTED_TAGS)

    @property
    def all_excludes(self) -> list[str]:
        return [*self.exclude, *self.extend_exclude]


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not valid UTF-8 at byte {exc.start}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except ValueError as exc:   # an integer over Python's 4,300-digit conversion limit
        raise ConfigError(f"{path}: invalid TOML: {str(exc).split(';')[0]}") from None


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `.mlcost-lint.toml`, or pyproject.toml with
    `[tool.mlcost-lint]`, searched upward from ``start`` up to the
    repository root (the first folder holding ``.git``), never above it: a
    config in a parent folder of a checkout is not the project's and must
    not widen the lint root or move the cache (issue 16, item 6)."""
    import os

    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        own = candidate / CONFIG_FILE
        if own.is_file():
            return own, _load_toml(own)
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            section = _tool_section(_load_toml(pyproject), pyproject)
            if section is not None:
                return pyproject, section
        if os.path.lexists(candidate / ".git"):
            break
    return None


# Spellings of the section users type by analogy with other tools
# (`[tool.ruff]`, Python package names): refused, naming the right one.
_MISSPELT_SECTIONS = ("mlcost_lint", "mlcostlint", "mlcost-linter", "mlcost")


def _tool_section(data: dict[str, Any], source: Path | None = None) -> Any:
    """``[tool.mlcost-lint]`` of a pyproject.toml, None when absent (a
    ``tool`` that is not a table is someone else's problem, not ours). A
    misspelt section (``[tool.mlcost_lint]``) is a config error: silently
    ignoring it would run with settings the user did not choose."""
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    if "mlcost-lint" not in tool:
        wrong = next((k for k in tool if k.lower() in _MISSPELT_SECTIONS), None)
        if wrong is not None:
            raise ConfigError(f"{_shown(source) if source else 'pyproject.toml'}: [tool.{wrong}] is not read: "
                              "the section is [tool.mlcost-lint] (with a hyphen)")
    return tool.get("mlcost-lint")


def _shown(path: Path) -> str:
    """A config path as the user would type it: relative when below the working directory."""
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _non_finite(raw: Any, where: tuple[str, ...] = ()) -> tuple[tuple[str, ...], float] | None:
    """The first ``inf``/``nan`` in the config (TOML has both; JSON Schema's
    range checks let NaN through, and ``inf`` into an int() crashes)."""
    import math

    if isinstance(raw, float) and not math.isfinite(raw):
        return where, raw
    items = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else ()
    for key, value in items:
        found = _non_finite(value, (*where, str(key)))
        if found is not None:
            return found
    return None


def validate(raw: Any, source: str) -> None:
    import jsonschema

    try:
        bad = _non_finite(raw)
    except RecursionError:
        raise ConfigError(f"{source}: invalid config: nested too deeply") from None
    if bad is not None:
        raise ConfigError(f"{source}: invalid value for '{'.'.join(bad[0]) or '<root>'}': "
                          f"expected a finite number, got {bad[1]}")

    schema = json.loads((Path(__file__).parent / "config_schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    try:
        errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.absolute_path))
    except RecursionError:
        raise ConfigError(f"{source}: invalid config: nested too deeply") from None
    if not errors:
        return
    err = errors[0]
    where = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed)) if isinstance(err.instance, dict) else []
        key = ".".join(filter(None, [where, extra[0] if extra else ""]))
        raise ConfigError(f"{source}: unknown key '{key}' (expected one of: {', '.join(allowed)})")
    expected = {
        "type": f"expected {err.validator_value}",
        "minimum": f"expected a number >= {err.validator_value}",
        "exclusiveMinimum": f"expected a number > {err.validator_value}",
        "maximum": f"expected a number <= {err.validator_value}",
        "exclusiveMaximum": f"expected a number < {err.validator_value}",
        "minLength": "expected a non-empty string",
        "maxItems": f"expected at most {err.validator_value} items",
    }.get(str(err.validator), err.message)
    raise ConfigError(f"{source}: invalid value for '{where or '<root>'}': {expected}, got {_brief(err.instance)}")


def _brief(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def settings_from_raw(raw: dict[str, Any], source: str | None, root: Path) -> Settings:
    if source is not None:
        validate(raw, source)
    s = Settings(source=source, root=root)
    s.origins = {key.replace("-", "_"): source or "config" for key in raw}
    for key, value in raw.items():
        if key == "policy":
            s.policy = Policy(
                allowed_gpu_types=value.get("allowed-gpu-types"),
                max_gpus_per_job=value.get("max-gpus-per-job"),
                allowed_regions=value.get("allowed-regions"),
            )
        elif key == "prices":
            s.prices_discount = float(value.get("discount", 0.0))
            if "file" in value:
                s.prices_file = _price_file(value["file"], root, source)
        else:
            setattr(s, key.replace("-", "_"), value)
    return s


def _price_file(value: str, root: Path, source: str | None) -> Path:
    """``[prices] file``, relative to the config file's folder; a plain file."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = root / path
    if not path.is_file():
        raise ConfigError(f"{source}: [prices] file '{value}' does not exist or is not a regular file")
    return path


def load_settings(config_file: Path | None, first_path: Path) -> Settings:
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"{config_file}: config file not found")
        data = _load_toml(config_file)
        if config_file.name == "pyproject.toml":
            section = _tool_section(data, config_file)
            data = {} if section is None else section
        return settings_from_raw(data, str(config_file), config_file.resolve().parent)
    found = find_config(first_path)
    if found is None:
        return Settings()
    path, data = found
    return settings_from_raw(data, str(path), path.parent)
