"""Crashes one value could cause (issue 16, items 9-13).

- 9: lone surrogates in HCL labels reach no reporter unescaped.
- 10: results too deep to pickle (``1 + 1 + ...``) give the same output
  with ``--jobs 1`` and ``--jobs 2``.
- 11: non-finite and out-of-range numbers in the config are exit 2.
- 12: one bad value is unknown for its object only (see also
  test_rule_values.py, which feeds every rule random values).
- 13: hostile baselines and ``--jobs`` are bounded with clear errors.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fuzzing import lint_tree, render
from hostile_helpers import SENTINEL
from mlc_testing import run_cli

from mlcost_lint.config import Settings

FORMATS = ("text", "full", "json", "sarif", "github")


# ------------------------------------------- 9: surrogates in HCL labels ---

def test_lone_surrogates_in_hcl_labels_and_keys_are_escaped_in_every_format(tmp_path: Path):
    (tmp_path / "main.tf").write_text('resource "aws_instance" "g\\ud800pu" {\n'
                                      '  instance_type = "p4d.24xlarge"\n'
                                      '  tags = { "team\\udfff" = "x" }\n}\n')
    settings = Settings(root=tmp_path, required_tags=["team"])
    result = lint_tree(tmp_path, settings)
    assert [(f.code, f.location.path, f.location.line, f.message) for f in result.findings] == [
        ("MLC101", "main.tf", 3, "aws_instance.g\\ud800pu lacks cost tag team (required-tags); its spend cannot "
                                 "be attributed; add it to tags or the provider's default_tags")]
    for fmt in FORMATS:
        out = render(result, settings, fmt, tmp_path)
        out.encode("utf-8")
        assert not [c for c in out if 0xD800 <= ord(c) <= 0xDFFF], fmt
        assert "g\\ud800pu" in out.replace("\\\\", "\\"), fmt


# ------------------------------------------- 10: deep results and jobs ---

def _deep_project(root: Path) -> Path:
    root.mkdir()
    (root / ".mlcost-lint.toml").write_text('required-tags = ["team"]\n')
    terms = " * ".join(["1"] * 300)      # 300 terms deep; evaluates to 1
    pad = "# padding so that the run is big enough for worker processes\n" * 200
    for i in range(30):
        (root / f"m{i:02d}.tf").write_text(
            f'resource "aws_instance" "a{i}" {{\n  instance_type = "p4d.24xlarge"\n  count = {terms}\n}}\n{pad}')
    (root / "nest.tf").write_text("locals {\n  x = " + "[" * 200 + "1" + "]" * 200 + "\n  y = "
                                  + "(" * 200 + "1" + ")" * 200 + "\n}\n")
    return root


def test_results_too_deep_to_pickle_give_the_same_output_with_any_jobs(tmp_path: Path):
    root = _deep_project(tmp_path / "deep")
    outs = {}
    for jobs, cache in (("1", "--no-cache"), ("2", "--no-cache"), ("2", "--cache-dir=c"), ("2", "--cache-dir=c")):
        r = run_cli(".", "--format", "json", "--jobs", jobs, cache, cwd=root)
        assert r.code == 1 and "Traceback" not in r.err, r.err
        outs[(jobs, cache, len(outs))] = r.out
    assert len(set(outs.values())) == 1
    found = [(f["code"], f["path"], f["line"]) for f in json.loads(r.out)["findings"]]
    assert found == [("MLC101", f"m{i:02d}.tf", 1) for i in range(30)]


# ---------------------------------------------------- 11: config numbers ---

@pytest.mark.parametrize(("line", "message"), [
    ("max-file-size-mb = inf", "invalid value for 'max-file-size-mb': expected a finite number, got inf"),
    ("max-file-size-mb = nan", "invalid value for 'max-file-size-mb': expected a finite number, got nan"),
    ("max-file-size-mb = -inf", "invalid value for 'max-file-size-mb': expected a finite number, got -inf"),
    ("max-file-size-mb = 1e308", "invalid value for 'max-file-size-mb': expected a number <= 1024, got 1e+308"),
    ("oversized-gpu-memory-fraction = nan",
     "invalid value for 'oversized-gpu-memory-fraction': expected a finite number, got nan"),
    ("[policy]\nmax-gpus-per-job = 1e400", "invalid value for 'policy.max-gpus-per-job': expected a finite number, got inf"),
    ("max-nesting-depth = 100000000", "invalid value for 'max-nesting-depth': expected a number <= 10000, got 100000000"),
    ("max-evaluation-steps = 10000000000",
     "invalid value for 'max-evaluation-steps': expected a number <= 1000000000, got 10000000000"),
    ("max-log-retention-days = " + "9" * 400,
     "invalid value for 'max-log-retention-days': expected a number <= 36500, got 9999999999999999999999999999999999999..."),
    ("max-log-retention-days = " + "9" * 5000,
     "invalid TOML: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits"),
    ("bucket-regions = { a = nan }", None),   # a string field: the schema's type check speaks first
])
def test_config_numbers_must_be_finite_and_in_range(line: str, message: str | None, tmp_path: Path):
    (tmp_path / ".mlcost-lint.toml").write_text(line + "\n")
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.code == 2 and "Traceback" not in r.err, r.err
    expected = message or "invalid value for 'bucket-regions.a': expected a finite number, got nan"
    assert r.err == f"mlcost-lint: error: {tmp_path / '.mlcost-lint.toml'}: {expected}\n"


# ----------------------------------------------- 13: baselines and jobs ---

@pytest.mark.parametrize(("content", "message"), [
    ('{"version": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}", "not valid JSON: nested too deeply"),
    ('{"version": 1, "findings": [{"code": "MLC204", "path": "job.yaml", "address": "a", "count": '
     + "9" * 5000 + "}]}",
     "not valid JSON: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits"),
    ('{"version": "' + "x\\n" * 100 + '", "findings": []}',
     "unsupported version 'x\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\nx\\n... (this mlcost-lint reads version 1)"),
])
def test_hostile_baselines_are_exit_2_with_a_clear_error(content: str, message: str, tmp_path: Path):
    (tmp_path / "job.yaml").write_bytes(SENTINEL)
    (tmp_path / "baseline.json").write_text(content)
    r = run_cli(".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path)
    assert r.code == 2
    assert r.err == f"mlcost-lint: error: --baseline baseline.json: {message}\n"


def test_baseline_that_is_a_fifo_is_refused_without_hanging(tmp_path: Path):
    (tmp_path / "job.yaml").write_bytes(SENTINEL)
    os.mkfifo(tmp_path / "baseline.json")
    r = run_cli(".", "--no-cache", "--baseline", "baseline.json", cwd=tmp_path, timeout=30)
    assert (r.code, r.err) == (2, "mlcost-lint: error: --baseline baseline.json: not a regular file\n")


def test_a_billion_jobs_is_a_usage_error(tmp_path: Path):
    (tmp_path / "job.yaml").write_bytes(SENTINEL)
    r = run_cli(".", "--no-cache", "--jobs", "1000000000", cwd=tmp_path)
    assert (r.code, r.err) == (
        2, "mlcost-lint: error: Invalid value for '--jobs': 1000000000 is not in the range 1<=x<=256.\n")


def test_jobs_from_the_api_are_capped(tmp_path: Path, monkeypatch):
    """LintOptions(jobs=10**9) must not allocate 4 x 10^9 chunk lists."""
    import mlcost_lint.parse_stage as parse_stage

    seen = []
    real = parse_stage._parse_many
    monkeypatch.setattr(parse_stage, "_parse_many", lambda tasks, jobs, *a, **k: seen.append(jobs) or real(tasks, 1, *a, **k))
    (tmp_path / "job.yaml").write_bytes(SENTINEL)
    lint_tree(tmp_path, jobs=10 ** 9)
    assert seen == [256]


# ------------------------------------- 12: one bad value, one object ---

BIG = "9" * 5000


def test_one_bad_value_is_unknown_for_its_object_only(tmp_path: Path):
    (tmp_path / "main.tf").write_text(
        f'resource "aws_cloudwatch_log_group" "big" {{\n  name = "x"\n  retention_in_days = {"9" * 400}\n}}\n'
        'resource "aws_cloudwatch_log_group" "ok" {\n  name = "y"\n}\n'
        'resource "aws_cloudwatch_log_group" "inf" {\n  name = "z"\n  retention_in_days = 1e999\n}\n'
        f'resource "aws_instance" "d" {{\n  count = {BIG}\n  instance_type = "p4d.24xlarge"\n}}\n'
        'resource "google_storage_bucket" "g" {\n  name = "g"\n  location = "US"\n'
        '  lifecycle_rule {\n    action = "Delete"\n    condition { age = 3 }\n  }\n}\n')
    (tmp_path / "job.json").write_text(
        '{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j2"}, "spec": {"backoffLimit": %s, '
        '"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "i", '
        '"resources": {"limits": {"nvidia.com/gpu": %s}}}]}}}}' % (BIG, BIG))
    r = run_cli(".", "--no-cache", "--select", "MLC0,MLC204,MLC401", cwd=tmp_path)
    assert r.code == 1 and "internal error" not in r.err and "Traceback" not in r.err, r.err
    assert r.out.splitlines()[:2] == [
        "job.json:1:71: MLC204 [warning] Job j2 holds an unknown number of GPUs with no run-time bound; a hung run "
        "keeps them until someone notices: set spec.activeDeadlineSeconds (price unknown)",
        "main.tf:5:1: MLC401 [warning] aws_cloudwatch_log_group.ok has no retention_in_days: its logs never expire "
        "and are billed forever; set retention_in_days (at most 365, max-log-retention-days)",
    ]
    assert r.out.splitlines()[2].startswith("Found 2 findings")


# Each reproducer of item 12 on its own: the odd object is unknown (no guess,
# no crash), the plain one beside it keeps every finding.

def _two_jobs(gpus: str) -> str:
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n"
           "      restartPolicy: Never\n      containers:\n      - name: m\n        image: i\n"
           "        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n")
    return job.format(name="odd", gpus=gpus) + "---\n" + job.format(name="plain", gpus="8")


def test_unicode_digit_gpu_count_is_unknown_for_that_job_only(tmp_path: Path):
    (tmp_path / "jobs.yaml").write_text(_two_jobs('"²"'), encoding="utf-8")
    r = run_cli(".", "--no-cache", "--select", "MLC0,MLC2,MLC6", cwd=tmp_path)
    assert r.code == 1 and r.err == "", r.err
    assert r.out.splitlines()[:4] == [
        "jobs.yaml:4:1: MLC204 [warning] Job odd holds an unknown number of GPUs with no run-time bound; a hung "
        "run keeps them until someone notices: set spec.activeDeadlineSeconds (price unknown)",
        "jobs.yaml:16:1: MLC204 [warning] Job plain holds 8 GPUs with no run-time bound; a hung run keeps them "
        "until someone notices: set spec.activeDeadlineSeconds (price unknown)",
        "jobs.yaml:23:30: MLC603 [warning] Job plain container m has no memory-backed emptyDir at /dev/shm but its "
        "pod has 8 GPUs (NCCL shares memory between them): the 64 MiB default makes DataLoader workers and NCCL "
        "crash mid-run; mount an emptyDir with medium: Memory at /dev/shm",
        "Found 3 findings (3 warnings) in 1 file.",
    ]


def _cron(name: str, schedule: str) -> str:
    return (f"---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: {name}}}\nspec:\n"
            f"  schedule: \"{schedule}\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
            "          restartPolicy: Never\n          containers:\n          - name: m\n            image: i\n"
            "            resources: {limits: {nvidia.com/gpu: 1}}\n")


def test_unicode_digit_in_a_cron_step_is_an_unknown_gap_for_that_cronjob_only(tmp_path: Path):
    (tmp_path / "cron.yaml").write_text(_cron("odd", "*/² * * * *") + _cron("plain", "*/5 * * * *"),
                                        encoding="utf-8")
    r = run_cli(".", "--no-cache", "--select", "MLC0,MLC206", cwd=tmp_path)
    assert r.code == 1 and r.err == "", r.err
    # An unreadable schedule counts as overlapping (rules.md, Settled questions), said as such.
    assert r.out.splitlines()[:3] == [
        'cron.yaml:6:3: MLC206 [warning] CronJob odd uses 1 GPU per run with concurrencyPolicy Allow (default); '
        'its schedule "*/² * * * *" is not a plain minute/hour pattern, so a run may still be going when the next '
        'starts; overlapping runs double the GPUs: set concurrencyPolicy: Forbid',
        "cron.yaml:21:3: MLC206 [warning] CronJob plain uses 1 GPU per run with concurrencyPolicy Allow (default); "
        "it runs every 5min at the shortest with no activeDeadlineSeconds; overlapping runs double the GPUs: set "
        "concurrencyPolicy: Forbid",
        "Found 2 findings (2 warnings) in 1 file.",
    ]


def test_infinite_count_is_an_unknown_instance_count_for_that_resource_only(tmp_path: Path):
    (tmp_path / "main.tf").write_text(
        'resource "aws_instance" "huge" {\n  count         = 1e999\n  instance_type = "p4d.24xlarge"\n}\n\n'
        'resource "aws_instance" "pair" {\n  count         = 2\n  instance_type = "p4d.24xlarge"\n}\n')
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["team"]\n')
    r = run_cli(".", "--no-cache", "--select", "MLC0,MLC1", cwd=tmp_path)
    assert r.code == 1 and r.err == "", r.err
    # huge: one instance of unknown index ([*]); pair: both of its instances.
    assert r.out.splitlines()[:4] == [
        "main.tf:1:1: MLC101 [warning] aws_instance.huge[*] lacks cost tag team (required-tags); its spend cannot "
        "be attributed; add it to tags or the provider's default_tags",
        "main.tf:6:1: MLC101 [warning] aws_instance.pair[0] lacks cost tag team (required-tags); its spend cannot "
        "be attributed; add it to tags or the provider's default_tags",
        "main.tf:6:1: MLC101 [warning] aws_instance.pair[1] lacks cost tag team (required-tags); its spend cannot "
        "be attributed; add it to tags or the provider's default_tags",
        "Found 3 findings (3 warnings) in 1 file.",
    ]


def test_gcs_lifecycle_action_that_is_not_a_map_is_unknown_for_that_bucket_only(tmp_path: Path):
    bucket = ('resource "google_storage_bucket" "{name}" {{\n  name     = "{name}"\n  location = "US"\n'
              '  versioning {{ enabled = true }}\n{rule}}}\n')
    (tmp_path / "main.tf").write_text(
        bucket.format(name="odd", rule='  lifecycle_rule {\n    action = "Delete"\n    condition { age = 3 }\n  }\n')
        + "\n" + bucket.format(name="plain", rule=""))
    r = run_cli(".", "--no-cache", "--select", "MLC0,MLC3", cwd=tmp_path)
    assert r.code == 1 and r.err == "", r.err
    assert r.out.splitlines()[:3] == [
        "main.tf:11:1: MLC303 [warning] GCS bucket google_storage_bucket.plain has no lifecycle rule; objects are "
        "kept in the hottest class forever; add a lifecycle_rule (Delete or SetStorageClass) or enable autoclass",
        "main.tf:14:16: MLC304 [warning] GCS bucket google_storage_bucket.plain has versioning enabled but no "
        "lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add a Delete "
        "lifecycle_rule on num_newer_versions or days_since_noncurrent_time",
        "Found 2 findings (2 warnings) in 1 file.",
    ]
