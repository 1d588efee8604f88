"""Fixers for training-config findings, keyed by rule code.

Each fixer reads the finding and the project model (never the rule's
message) and returns a :class:`Fix` or None. A fix is offered only when it
is certainly right for that config:

- MLC301 no-checkpoint-cleanup: add ``save_total_limit: 2`` to a
  Transformers/TRL/Axolotl config that does not write ``save_total_limit``
  (or writes ``null``), placed after ``save_steps``/``save_strategy``.
  Not for Lightning/NeMo ``save_top_k`` or ``hub_strategy`` findings.
- MLC601 no-mixed-precision: add ``bf16: true`` to a Transformers/TRL/
  Axolotl config that writes neither ``bf16`` nor ``fp16``, only when the
  workload that runs it pins a GPU whose catalogue entry computes in bf16.
  An explicit ``bf16: false`` is left alone (someone chose it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from mlcost_lint.fix import Fix, FixContext, YamlEdit
from mlcost_lint.parse.document import FileKind

if TYPE_CHECKING:
    from mlcost_lint.model.project import Project
    from mlcost_lint.model.training import Setting, TrainingConfig
    from mlcost_lint.rule import Finding

SAVE_TOTAL_LIMIT = 2     # the rule suggests 2: the newest to resume from, one spare

_TRAINER_STYLE = frozenset({"transformers", "axolotl"})
_YAML = frozenset({FileKind.YAML})


def _standalone_yaml_configs(project: "Project") -> dict[str, list["TrainingConfig"]]:
    """path -> the training configs that are a YAML file's own documents (not
    embedded in a manifest, not read from a launch line), in model order."""
    kinds = {pf.path: pf.kind for pf in project.files}
    out: dict[str, list[TrainingConfig]] = {}
    for c in project.training:
        if c.embedded_in is None and not c.launch_line and kinds.get(c.path) in _YAML \
                and c.path.lower().endswith((".yaml", ".yml")):
            out.setdefault(c.path, []).append(c)
    return out


def _config_of(finding: "Finding", context: FixContext) -> "TrainingConfig | None":
    """The standalone YAML training config a finding is about: by address,
    else the config whose document holds the finding's line."""
    candidates = context.once(_standalone_yaml_configs).get(finding.location.path, [])
    by_address = [c for c in candidates if c.address == finding.address]
    if len(by_address) == 1:
        return by_address[0]
    line = finding.location.line
    by_line = [c for c in candidates if c.document.start_line <= line <= c.document.end_line]
    return by_line[0] if len(by_line) == 1 else None


def _key_path(setting: "Setting[Any]") -> tuple[str, ...]:
    return tuple(setting.key.split(".")) if setting.key else ()


def _edit(config: "TrainingConfig", key_path: tuple, key: str, value: Any,
          after: tuple[str, ...] = ()) -> YamlEdit:
    return YamlEdit(config.path, config.document.index, tuple(config.key_path) + tuple(key_path),
                    key, value, after)


def _root_mapping(config: "TrainingConfig") -> dict | None:
    node = config.document.get(config.key_path)
    return node if isinstance(node, dict) else None


def fix_checkpoint_limit(finding: "Finding", context: FixContext) -> Fix | None:
    config = _config_of(finding, context)
    if config is None or config.framework.value not in _TRAINER_STYLE:
        return None
    root = _root_mapping(config)
    if root is None or root.get("save_total_limit") is not None:
        return None
    s = config.settings
    if s.save_strategy.known and s.save_strategy.value == "no":
        return None
    # A hub_strategy: all_checkpoints finding is not fixed by a local limit.
    hub = s.hub_strategy
    if hub.location is not None and hub.location.line == finding.location.line:
        return None
    edit = _edit(config, (), "save_total_limit", SAVE_TOTAL_LIMIT,
                 after=("save_steps", "save_strategy", "output_dir"))
    return Fix(finding.code, f"add save_total_limit: {SAVE_TOTAL_LIMIT}", (edit,))


def fix_bf16(finding: "Finding", context: FixContext) -> Fix | None:
    config = _config_of(finding, context)
    if config is None or config.framework.value not in _TRAINER_STYLE:
        return None
    root = _root_mapping(config)
    if root is None or "bf16" in root or "fp16" in root:
        return None
    try:
        from mlcost_lint.rules.efficiency.gpu_training import device_of
    except ImportError:
        return None
    device = device_of(context.project, config)
    if not device.is_gpu or device.gpu is None or not device.gpu.bf16 or not device.links:
        return None
    edit = _edit(config, (), "bf16", True, after=("fp16", "tf32", "gradient_checkpointing",
                                                  "gradient_accumulation_steps", "learning_rate"))
    return Fix(finding.code, f"add bf16: true ({device.gpu.name} computes in bf16)", (edit,))


FIXERS: dict[str, Callable[["Finding", FixContext], Fix | None]] = {
    "MLC301": fix_checkpoint_limit,
    "MLC601": fix_bf16,
}
