from __future__ import annotations

from pathlib import Path

import pytest

from mlcost_lint.config import ConfigError, load_settings


def test_defaults_without_config(tmp_path: Path):
    s = load_settings(None, tmp_path)
    # Not configured: MLC101/MLC102 are off unless selected, then check the suggested keys.
    assert s.required_tags is None and s.tag_keys == ["team", "project", "cost-center"]
    assert s.require_budget is False and s.extend_select == [] and s.extend_exclude == []
    assert (s.max_log_retention_days, s.min_checkpoint_interval_steps, s.max_checkpoints_per_run,
            s.max_job_backoff_limit, s.oversized_gpu_memory_fraction) == (365, 100, 200, 6, 0.25)
    assert s.source is None


def test_found_upward_and_all_keys(tmp_path: Path):
    (tmp_path / ".mlcost-lint.toml").write_text(
        'select = ["MLC1"]\nignore = ["MLC102"]\nexclude = ["gen/"]\nrequired-tags = ["owner"]\n'
        'max-log-retention-days = 30\nmin-checkpoint-interval-steps = 50\nmax-checkpoints-per-run = 10\n'
        'max-job-backoff-limit = 2\noversized-gpu-memory-fraction = 0.5\ndefault-region = "eu-west-1"\n'
        '[per-file-ignores]\n"k8s/*.yaml" = ["MLC102"]\n[bucket-regions]\nraw-data = "US"\n'
        '[policy]\nallowed-gpu-types = ["L4"]\nmax-gpus-per-job = 16\nallowed-regions = ["eu-west-1"]\n')
    sub = tmp_path / "infra" / "k8s"
    sub.mkdir(parents=True)
    s = load_settings(None, sub)
    assert s.source == str(tmp_path / ".mlcost-lint.toml")
    assert (s.select, s.ignore, s.exclude, s.required_tags) == (["MLC1"], ["MLC102"], ["gen/"], ["owner"])
    assert (s.max_log_retention_days, s.max_job_backoff_limit, s.default_region) == (30, 2, "eu-west-1")
    assert s.per_file_ignores == {"k8s/*.yaml": ["MLC102"]} and s.bucket_regions == {"raw-data": "US"}
    assert (s.policy.allowed_gpu_types, s.policy.max_gpus_per_job, s.policy.allowed_regions) == (["L4"], 16, ["eu-west-1"])


def test_pyproject_section(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\n[tool.mlcost-lint]\nrequired-tags = ["team"]\n')
    assert load_settings(None, tmp_path).required_tags == ["team"]


@pytest.mark.parametrize("text, message", [
    ('colour = "red"\n', "unknown key 'colour'"),
    ('[policy]\nmax-gpu = 3\n', "unknown key 'policy.max-gpu'"),
    ('max-log-retention-days = "a year"\n', "invalid value for 'max-log-retention-days': expected integer"),
    ('max-job-backoff-limit = -1\n', "invalid value for 'max-job-backoff-limit': expected a number >= 0"),
    ('required-tags = "team"\n', "invalid value for 'required-tags': expected array"),
    ('select = [\n', "invalid TOML"),
])
def test_invalid_config_names_the_key(tmp_path: Path, text: str, message: str):
    cfg = tmp_path / ".mlcost-lint.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(cfg, tmp_path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_default_set_select_and_extend_select(tmp_path: Path):
    """rules.md "The default set (v2)": opt-in rules by their setting; select replaces, extend-select adds."""
    from mlcost_lint.config import Settings
    from mlcost_lint.engine import selected_rules, selection_notices

    def codes(s):
        return {r.code for r in selected_rules(s)}

    default = Settings(root=tmp_path)
    assert {"MLC101", "MLC102", "MLC701"}.isdisjoint(codes(default)) and "MLC203" in codes(default)
    assert selection_notices(default, selected_rules(default)) == [
        "Cost-tag rules MLC101/MLC102 are off: set required-tags in .mlcost-lint.toml to check cost tags and labels."]
    configured = Settings(root=tmp_path, required_tags=["owner"], require_budget=True)
    assert {"MLC101", "MLC102", "MLC701"} <= codes(configured)
    assert selection_notices(configured, selected_rules(configured)) == []
    extended = Settings(root=tmp_path, extend_select=["MLC1"])
    assert {"MLC101", "MLC102", "MLC203"} <= codes(extended) and "MLC701" not in codes(extended)
    assert selection_notices(extended, selected_rules(extended)) == [
        "MLC101/MLC102 check the suggested keys team, project, cost-center: set required-tags in "
        ".mlcost-lint.toml to use your own."]
    only = Settings(root=tmp_path, select=["MLC701"])
    assert codes(only) == {"MLC701"} and selection_notices(only, selected_rules(only)) == []
    ignored = Settings(root=tmp_path, ignore=["MLC1"])
    assert selection_notices(ignored, selected_rules(ignored)) == []


def test_extend_keys_in_the_config_file(tmp_path: Path):
    (tmp_path / ".mlcost-lint.toml").write_text(
        'extend-select = ["MLC701"]\nextend-exclude = ["generated/"]\nrequire-budget = false\n')
    s = load_settings(None, tmp_path)
    assert (s.extend_select, s.extend_exclude, s.require_budget) == (["MLC701"], ["generated/"], False)
    assert s.all_excludes == ["generated/"]
