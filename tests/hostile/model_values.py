"""Random values at every model attribute a rule reads (issue 16, item 12).

A rule must not raise on any value the model can hold. This module builds
real models from ``fixtures/`` (so the rules reach their deep code paths),
lists every place in them that holds a value (a *slot*), and replaces some
with values from :func:`model_value` — the shapes the model can hold:

- free-form places (a resource's ``attrs`` and ``tags``, a workload's
  ``spec``, labels, selectors, a container's ``requests``/``limits``, a
  ``Setting[Any]``) take anything a YAML/JSON/HCL document or the evaluator
  yields: None, UNKNOWN, bools, ints (huge, negative), floats (inf, nan),
  strings (Unicode digits, lone surrogates, control characters, template
  syntax), nested lists and maps, keys of other types; keys may also be
  added or deleted;
- typed places (``replicas: Maybe[int] | None``, ``Setting[int]``,
  ``BatchJob.time_limit``) take what their annotation admits, with the edge
  values of that type (0, negative, the model's largest).

Used by tests/hostile/test_rule_values.py (fast, in the suite) and by
bench/fuzz.py (target ``model``, the long profile).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

from mlcost_lint.config import Policy, Settings
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.training import Setting

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# -- values -------------------------------------------------------------------

_SPECIAL_INTS = [0, 1, -1, 2, 8, 1023, 2**31, 2**63, -(2**63), 10**15, 10**18, 10**40, 10**400, -(10**400)]
_SPECIAL_FLOATS = [0.0, -0.0, 0.5, 1e-300, 1e308, -1e308, float("inf"), float("-inf"), float("nan")]
_SPECIAL_STRINGS = [
    "", " ", "0", "-1", "8", "²", "٣", "१०", "½", "Ⅻ", "1e999", "-1e999", "nan", "inf", "0x10", "1_000",
    "10" * 300, "*/²", "*/0", "0 0 * * *", "@hourly", "100Gi", "1.5Ti", "500m", "4e3", "2h", "INFINITE",
    "UNLIMITED", "auto", "true", "no", "null", "${var.x}", "{{ .Values.x }}", "$(GPUS)", "s3://", "gs:///x",
    "s3://bucket/path", "abfss://c@a.dfs.core.windows.net/p", "us-east-1", "us-east1-a", "\ud800", "a\udfffb",
    "\x00", "\x1b[31m", "line\nnext", "\u200b", "::error::x", "nvidia.com/gpu", "p4d.24xlarge",
    "ml.p4d.24xlarge", "a2-highgpu-8g", "Standard_ND96asr_v4", "a100", "H100", "spot", "SPOT", "preemptible",
    "Always", "Never", "OnFailure", "bf16", "fp16", "epoch", "steps", "no", "all", "end", "every_save",
    "DEBUG", "debug", "Warning", "passive", "STANDARD", "COLDLINE", "Delete", "SetStorageClass", "true ",
]
_TEXT = st.one_of(
    st.sampled_from(_SPECIAL_STRINGS),
    st.text(max_size=12),
    st.text(alphabet=st.characters(codec=None, categories=("Nd", "No", "Nl", "Cc", "Cs", "Zs")), max_size=6),
)
_INTS = st.one_of(st.sampled_from(_SPECIAL_INTS), st.integers(-10, 10**6))
_FLOATS = st.one_of(st.sampled_from(_SPECIAL_FLOATS), st.floats(allow_nan=True, allow_infinity=True))
_KEYS = st.one_of(_TEXT, st.sampled_from([0, 1, -1, True, False, None, 1.5]))
SCALARS = st.one_of(st.none(), st.just(UNKNOWN), st.booleans(), _INTS, _FLOATS, _TEXT)
# A YAML/JSON document never holds UNKNOWN (only evaluated Terraform does).
DOC_SCALARS = st.one_of(st.none(), st.booleans(), _INTS, _FLOATS, _TEXT)


def model_value(document: bool = False) -> st.SearchStrategy[Any]:
    """Anything a free-form model place can hold (``document``: one read
    from a YAML/JSON document, without UNKNOWN)."""
    return st.recursive(
        DOC_SCALARS if document else SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(_KEYS, inner, max_size=4),
            st.dictionaries(_TEXT, inner, max_size=4),
        ),
        max_leaves=12,
    )


def _split_union(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "|" and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [p for p in parts if p]


def typed_value(annotation: str, *, max_int: int = 10**18) -> st.SearchStrategy[Any] | None:
    """Values an annotation admits (as written with ``from __future__ import
    annotations``), or None when it is not a value the model varies (a
    Location, a catalogue object)."""
    options: list[st.SearchStrategy[Any]] = []
    ints = st.one_of(st.sampled_from([i for i in _SPECIAL_INTS if abs(i) <= max_int]), st.integers(-3, 10**6))
    for part in _split_union(annotation):
        m = re.fullmatch(r"Maybe\[(.*)\]", part)
        if m:
            options.append(st.just(UNKNOWN))
            part = m.group(1)
            inner = typed_value(part, max_int=max_int)
            if inner is None:
                return None
            options.append(inner)
            continue
        if part == "None":
            options.append(st.none())
        elif part == "int":
            options.append(ints)
        elif part == "float":
            options.append(st.one_of(ints, _FLOATS))
        elif part == "bool":
            options.append(st.booleans())
        elif part == "str":
            options.append(_TEXT)
        elif part == "Any":
            options.append(model_value())
        elif part.startswith("dict["):
            options.append(st.dictionaries(_TEXT, model_value(), max_size=4))
        elif part.startswith("list[") or part.startswith("tuple["):
            elem = part[5:-1] if part.startswith("list[") else part[6:-1].split(",")[0]
            inner = typed_value(elem, max_int=max_int)
            if inner is None:
                return None
            options.append(st.lists(inner, max_size=4))
        else:
            return None
    return st.one_of(*options) if options else None


# -- slots --------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Slot:
    """One place in a model: ``owner[key]`` (a dict/list) or ``owner.key``
    (an attribute). ``kind`` is "any" (free-form), "doc" (free-form, read
    from a document: never UNKNOWN) or an annotation. A ``fixed`` slot is a
    container whose shape the model guarantees (``attrs`` is a dict with
    string keys, ``tolerations`` a list of dicts): it keeps its type, and
    only gains or loses entries."""

    owner: Any
    key: Any
    kind: str
    attribute: bool
    where: str                       # for failure messages: "aws_instance.gpu attrs.tags.team"
    fixed: bool = False

    def get(self) -> Any:
        return getattr(self.owner, self.key) if self.attribute else self.owner[self.key]

    def set(self, value: Any) -> None:
        if self.attribute:
            object.__setattr__(self.owner, self.key, value)   # frozen dataclasses too (DataPath)
        else:
            self.owner[self.key] = value

    def delete(self) -> bool:
        if not self.attribute and isinstance(self.owner, dict) and self.key in self.owner:
            del self.owner[self.key]
            return True
        return False


def _deep(owner: Any, key: Any, value: Any, where: str, out: list[Slot], attribute: bool = False,
          depth: int = 0, kind: str = "any", fixed: int = 1) -> None:
    """``value`` (at owner[key]) and every value nested in it, free-form
    (``kind`` "doc" for values read from a document). The first ``fixed``
    levels keep their container type."""
    out.append(Slot(owner, key, kind, attribute, where, fixed=depth < fixed))
    if depth > 12:
        return
    if isinstance(value, dict):
        for k, v in list(value.items()):
            _deep(value, k, v, f"{where}.{k}", out, depth=depth + 1, kind=kind, fixed=fixed)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _deep(value, i, v, f"{where}[{i}]", out, depth=depth + 1, kind=kind, fixed=fixed)


def _typed(obj: Any, names: tuple[str, ...], where: str, out: list[Slot]) -> None:
    hints = {f.name: f.type for f in dataclasses.fields(obj)}
    for name in names:
        kind = hints[name]
        if isinstance(kind, str) and typed_value(kind) is not None:
            out.append(Slot(obj, name, kind, True, f"{where}.{name}"))


_FREE = "any"
_DOC = "doc"

_RESOURCE_TYPED = ("region", "zone")
_PROVIDER_TYPED = ("region", "zone")
_TEMPLATE_TYPED = ("replicas", "min_replicas", "hosts_per_replica", "active_deadline_seconds", "restart_policy")
_TEMPLATE_FREE = ("labels", "annotations", "node_selector", "affinity", "tolerations", "volumes")
_CONTAINER_TYPED = ("image", "command", "args")
_MANAGED_TYPED = ("instance_type", "instance_count", "spot", "runtime_limit", "checkpoint_uri", "region",
                  "shm_bytes", "shm_default", "compute", "rdma_by_service")
_BATCH_TYPED = ("nodes", "tasks_per_node", "gpus_per_node", "time_limit", "time_unbounded", "partition")


def slots_of(project: Any) -> list[Slot]:
    """Every place in ``project`` a rule may read a value from."""
    out: list[Slot] = []
    tf = project.terraform
    for r in tf.resources:
        _deep(r, "attrs", r.attrs, f"{r.address} attrs", out, attribute=True)
        if r.tags is not None and r.tags is not UNKNOWN:
            _deep(r, "tags", r.tags, f"{r.address} tags", out, attribute=True)
        else:
            out.append(Slot(r, "tags", "Maybe[dict[str, Any]] | None", True, f"{r.address} tags"))
        _typed(r, _RESOURCE_TYPED, r.address, out)
    for p in tf.providers:
        _typed(p, _PROVIDER_TYPED, f"provider {p.name}", out)
        if isinstance(p.default_tags, dict):
            _deep(p, "default_tags", p.default_tags, f"provider {p.name} default_tags", out, attribute=True)
    k8s = project.kubernetes
    for w in [*k8s.workloads, *k8s.fragments]:
        where = w.address
        _deep(w, "spec", w.spec, f"{where} spec", out, attribute=True, kind=_DOC)
        _deep(w, "labels", w.labels, f"{where} labels", out, attribute=True, kind=_DOC)
        for t in w.templates:
            tw = f"{where} template {t.role or '-'}"
            _typed(t, _TEMPLATE_TYPED, tw, out)
            for name in _TEMPLATE_FREE:
                _deep(t, name, getattr(t, name), f"{tw}.{name}", out, attribute=True, kind=_DOC,
                      fixed=2 if name in ("tolerations", "volumes") else 1)
            for c in [*t.containers, *t.init_containers]:
                cw = f"{tw} container {c.name}"
                _typed(c, _CONTAINER_TYPED, cw, out)
                _deep(c, "requests", c.requests, f"{cw}.requests", out, attribute=True, kind=_DOC)
                _deep(c, "limits", c.limits, f"{cw}.limits", out, attribute=True, kind=_DOC)
                for i in range(len(c.command)):
                    out.append(Slot(c.command, i, "str", False, f"{cw}.command[{i}]"))
                for i in range(len(c.args)):
                    out.append(Slot(c.args, i, "str", False, f"{cw}.args[{i}]"))
                for name, env in c.env.items():
                    out.append(Slot(env, "value", "Maybe[str]", True, f"{cw}.env.{name}"))
        if w.managed is not None:
            _typed(w.managed, _MANAGED_TYPED, f"{where} managed", out)
            for i, dp in enumerate(w.managed.data_paths):
                out.append(Slot(dp, "uri", "Maybe[str]", True, f"{where} managed data_paths[{i}]"))
        if w.batch is not None:
            _typed(w.batch, _BATCH_TYPED, f"{where} batch", out)
    for cm in k8s.config_maps:
        for key in cm.data:
            out.append(Slot(cm.data, key, "str", False, f"{cm.address} data.{key}"))
    for cfg in project.training:
        s = cfg.settings
        for f in dataclasses.fields(s):
            value = getattr(s, f.name)
            if isinstance(value, Setting):
                m = re.fullmatch(r"Setting\[(.*)\]", str(f.type))
                inner = m.group(1) if m else "Any"
                out.append(Slot(value, "value", f"Maybe[{inner}]", True, f"{cfg.address} {f.name}"))
                out.append(Slot(value, "explicit", "bool", True, f"{cfg.address} {f.name}.explicit"))
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, Setting):
                        out.append(Slot(item, "value", "Maybe[str]", True, f"{cfg.address} {f.name}[{i}]"))
    return out


def value_for(slot: Slot) -> st.SearchStrategy[Any]:
    if slot.kind in (_FREE, _DOC):
        return model_value(document=slot.kind == _DOC)
    # Settings are read by as_int (|n| <= 10**15); counts by parse_count (18 digits).
    max_int = 10**15 if isinstance(slot.owner, Setting) else 10**18
    found = typed_value(slot.kind, max_int=max_int)
    assert found is not None, slot
    return found


# -- projects -----------------------------------------------------------------

def fuzz_settings(root: Path) -> Settings:
    """Every rule on, opt-in ones and policy included."""
    return Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root,
                    default_region="us-east-1", bucket_regions={"data": "us-west-2"},
                    policy=Policy(allowed_gpu_types=["a100"], max_gpus_per_job=8, allowed_regions=["us-east-1"]))


_BASES: dict[str, Any] = {}


def base_project(name: str) -> Any:
    """The model of ``fixtures/<name>`` before linking (built once)."""
    if name not in _BASES:
        from mlcost_lint.discover import discover
        from mlcost_lint.model.build import build_project
        from mlcost_lint.parse_stage import parse_all
        from mlcost_lint.pipeline import LintOptions

        root = FIXTURES / name
        settings = fuzz_settings(root)
        old = os.getcwd()
        os.chdir(root)
        try:
            found = discover(["."], settings.all_excludes, settings.root,
                             respect_gitignore=settings.respect_gitignore)
            parsed = parse_all(found.files, settings, LintOptions())
            _BASES[name] = build_project(parsed, settings, var_files=[], cli_vars={})
        finally:
            os.chdir(old)
    return _BASES[name]


def fixture_sets() -> list[str]:
    # not a cache folder an earlier run left in fixtures/ (.mlcost_lint_cache): only fixture sets
    return sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if FIXTURES.is_dir() else []


@dataclass(slots=True)
class Result:
    failures: list[Any]              # engine RuleFailure
    link_errors: list[str]           # with the traceback
    changes: list[str]
    findings: int


def _change(slots: list[Slot], draw: Callable[[st.SearchStrategy[Any]], Any]) -> tuple | None:
    """Draw one change: (slot index, action, value, key). The slots are
    listed once per case (a slot a change detached is harmless)."""
    if not slots:
        return None
    index = draw(st.integers(0, len(slots) - 1))
    slot = slots[index]
    free = slot.kind in (_FREE, _DOC)
    if slot.fixed:
        action = draw(st.sampled_from(("add", "delete")))
    else:
        action = draw(st.sampled_from(("set", "set", "set", "delete", "add"))) if free else "set"
    value = None
    if action != "delete":
        value = draw(value_for(slot))
        if slot.fixed and isinstance(slot.get(), list) and not isinstance(value, dict):
            value = {"key": value}           # a list of dicts stays one
    key = draw(_TEXT if slot.fixed else _KEYS) if action == "add" else None
    return index, action, value, key


def _apply(slots: list[Slot], change: tuple) -> str:
    index, action, value, key = change
    value = copy.deepcopy(value)    # the change is replayed: never share (and later change) its value
    slot = slots[index]
    try:
        current = slot.get()
    except (KeyError, IndexError):   # an earlier change of this case removed it
        return f"(gone: {slot.where})"
    if action == "delete" and slot.delete():
        return f"delete {slot.where}"
    if action == "add" and isinstance(current, dict):
        current[key] = value
        return f"add {slot.where}[{key!r}] = {value!r}"
    if action == "add" and isinstance(current, list):
        current.append(value)
        return f"append {slot.where} {value!r}"
    if slot.fixed:
        return f"(no change at {slot.where})"
    if action == "delete":
        value = None
    slot.set(value)
    return f"set {slot.where} = {value!r}"


def _link_tracebacks(name: str, changes: list[tuple], settings: Settings) -> list[str]:
    """The linker failures again, with tracebacks (link_project keeps one line)."""
    import traceback

    from mlcost_lint.link.configs import ConfigIndex, link_configs
    from mlcost_lint.link.data_paths import link_data_paths
    from mlcost_lint.link.launcher import link_launches
    from mlcost_lint.link.managed import link_managed
    from mlcost_lint.link.pools import link_pools

    project = copy.deepcopy(base_project(name))
    slots = slots_of(project)
    for change in changes:
        _apply(slots, change)
    index = ConfigIndex.build(project.training)
    out = []
    for step in (lambda: link_configs(project, index), lambda: link_launches(project, index),
                 lambda: link_pools(project), lambda: link_data_paths(project, settings),
                 lambda: link_managed(project, settings)):
        try:
            step()
        except Exception:  # noqa: BLE001 - reported by the caller
            out.append(traceback.format_exc())
    return out


def run_mutated(name: str, draw: Callable[[st.SearchStrategy[Any]], Any], n_changes: int,
                before_links: bool) -> Result:
    """Copy the fixture model, change ``n_changes`` slots (values drawn with
    ``draw``), link (before or after the change) and run every rule, then
    pricing and secret redaction as the pipeline does."""
    from mlcost_lint.engine import all_rules, run_rules
    from mlcost_lint.link import link_project
    from mlcost_lint.pricing import price_findings
    from mlcost_lint.redact import redact_findings

    project = copy.deepcopy(base_project(name))
    settings = fuzz_settings(FIXTURES / name)
    if not before_links:
        link_project(project, settings)
    changes: list[tuple] = []
    shown: list[str] = []
    slots = slots_of(project)
    for _ in range(n_changes):
        change = _change(slots, draw)
        if change is None:
            break
        changes.append(change)
        shown.append(_apply(slots, change))
    link_errors: list[str] = []
    if before_links:
        link_project(project, settings)
        if project.links.errors:
            link_errors = [*project.links.errors, *_link_tracebacks(name, changes, settings)]
    failures: list[Any] = []
    old = os.getcwd()
    os.chdir(FIXTURES / name)
    try:
        findings = run_rules(project, settings, list(all_rules()), failures)
        price_findings(findings, settings)
        redact_findings(findings, project)
    finally:
        os.chdir(old)
    return Result(failures, link_errors, shown, len(findings))
