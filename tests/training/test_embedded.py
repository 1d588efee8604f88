"""Training configs inside ConfigMap data values: lines point into the manifest."""

from __future__ import annotations

from mlcost_lint.model.training import Framework, read_embedded_configs
from mlcost_lint.parse.yamljson import parse_yaml

from .helpers import FIXTURES, written

MANIFEST = FIXTURES / "not_configmap_embedded.yaml"


def _embedded(key: str):
    text = MANIFEST.read_text(encoding="utf-8")
    doc = parse_yaml(text, "k8s/cm.yaml")[0]
    key_line, key_col = doc.position(("data", key))
    # A `|` block's content starts on the line after the key, indented by 2 more.
    return read_embedded_configs(doc.data["data"][key], "k8s/cm.yaml", key_line + 1,
                                 "ConfigMap/ml/train-config", key, base_column=key_col + 2)


def test_embedded_yaml_lines_point_into_the_manifest():
    configs = _embedded("sft.yaml")
    assert len(configs) == 1
    cfg = configs[0]
    assert cfg.framework is Framework.TRANSFORMERS
    assert cfg.embedded_in == "ConfigMap/ml/train-config" and cfg.embedded_key == "sft.yaml"
    assert cfg.address == "ConfigMap/ml/train-config[sft.yaml]"
    assert cfg.path == "k8s/cm.yaml"
    s = cfg.settings
    assert written(s.model_id) == ("meta-llama/Llama-3.1-8B", True, 8, "model_name_or_path")
    assert written(s.save_steps) == (10, True, 11, "save_steps")
    assert written(s.logging_steps) == (1, True, 12, "logging_steps")
    assert s.logging_steps.location.column == 5
    assert [(p.value, p.location.line) for p in s.data_paths] == [("s3://acme-ckpt/llama", 13)]
    assert cfg.location.line == 8


def test_embedded_json_deepspeed():
    configs = _embedded("ds_config.json")
    assert [c.framework for c in configs] == [Framework.DEEPSPEED]
    s = configs[0].settings
    assert written(s.zero_stage) == (3, True, 17, "zero_optimization.stage")
    assert [written(d) for d in s.debug_flags] == [("true", True, 18, "wall_clock_breakdown")]


def test_embedded_non_config_and_garbage():
    assert _embedded("README") == []
    assert read_embedded_configs("{{ .Values.x }}: [", "a.yaml", 5, "ConfigMap/x", "c.yaml") == []
    assert read_embedded_configs("", "a.yaml", 5, "ConfigMap/x", "c.yaml") == []
    assert read_embedded_configs(None, "a.yaml", 5, "ConfigMap/x", "c.yaml") == []  # type: ignore[arg-type]
    assert read_embedded_configs("a: b", "a.yaml", "x", "ConfigMap/x", "c.yaml") == []  # type: ignore[arg-type]
