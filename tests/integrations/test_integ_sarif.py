"""SARIF for GitHub code scanning through the real CLI: rule metadata,
fingerprints, regions, related locations linked from the message, helpUri
anchors into docs/rules.md, and the validator (schema + GitHub rules, and
the SARIF multitool's GitHub rules where it is installed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import SARIF_VALIDATOR as VALIDATOR
from mlc_testing import run_cli, sarif_schema_errors

from .projects import POD, SFT, terraform_project, write

ROOT = Path(__file__).resolve().parents[2]
needs_validator = pytest.mark.skipif(not VALIDATOR.is_file(),
                                     reason="../shared/tools/validate-sarif (GitHub's ingestion rules) is not "
                                            "beside the repository; the schema is checked from tests/data")
MULTITOOL_PREFIX = ROOT / ".sarif-tools"


def _sarif(tmp_path: Path, *args: str) -> dict:
    write(tmp_path, {"pod.yaml": POD, "configs/sft.yaml": SFT})
    terraform_project(tmp_path)
    r = run_cli(".", "--format", "sarif", "--output", "out.sarif", "--no-cache", *args, cwd=tmp_path)
    assert r.code == 1, r.err
    assert r.out == ""
    return json.loads((tmp_path / "out.sarif").read_text())


def test_rule_metadata_tags_precision_help_and_anchor(tmp_path: Path):
    doc = _sarif(tmp_path, "--select", "MLC102,MLC301")
    driver = doc["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == ["MLC102", "MLC301"]
    rule = driver["rules"][1]
    assert rule["name"] == "no-checkpoint-cleanup"
    assert rule["shortDescription"] == {"text": "Checkpoints are saved with no retention limit"}
    assert rule["properties"]["tags"] == ["cost", "storage"]
    assert rule["properties"]["precision"] == "very-high"
    assert rule["defaultConfiguration"]["level"] == "warning"
    assert rule["helpUri"] == "https://github.com/mlcost-lint/mlcost-lint/blob/main/docs/rules.md#mlc301-no-checkpoint-cleanup"
    markdown = rule["help"]["markdown"]
    assert markdown.startswith("**Checkpoints are saved with no retention limit**\n\n"
                               "**Fix:** Set save_total_limit / save_top_k so that old checkpoints are deleted.\n\n")
    assert "## Fix" in markdown and markdown.endswith(f"({rule['helpUri']})")
    assert "Fix: Set save_total_limit" in rule["help"]["text"]


def test_results_regions_fingerprints_and_no_absolute_paths(tmp_path: Path):
    doc = _sarif(tmp_path, "--select", "MLC102,MLC203")
    run = doc["runs"][0]
    results = run["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [("MLC203", 1, "warning"),
                                                                             ("MLC102", 0, "warning")]
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": "infra/nodes.tf", "uriBaseId": "%SRCROOT%"},
                   "region": {"startLine": 9, "startColumn": 5, "endLine": 9, "endColumn": 13}}
    assert set(results[0]["partialFingerprints"]) == {"mlcostLint/v1"}
    assert results[0]["properties"] == {"address": "aws_eks_node_group.gpu", "cost": {
        "amount_usd": 47848.0, "period": "month",
        "basis": "2 nodes x $32.7726/h x 730 h = $47,848/month [p4d.24xlarge on-demand $32.7726/h (us-east-1); "
                 "list prices as of 2026-12-03]",
        "price_date": "2026-12-03", "at_least": False}}
    assert run["properties"]["cost"]["always_on_usd_per_month"] == 47848.0
    assert "%SRCROOT%" in run["originalUriBaseIds"]
    assert str(tmp_path) not in json.dumps(doc)
    assert "language" not in run and "language" not in run["tool"]["driver"]


def test_fingerprints_survive_lines_moving(tmp_path: Path):
    before = _sarif(tmp_path, "--select", "MLC102")["runs"][0]["results"][0]
    (tmp_path / "pod.yaml").write_text("# a comment pushes everything down\n\n" + POD)
    r = run_cli(".", "--format", "sarif", "--select", "MLC102", "--no-cache", cwd=tmp_path)
    after = json.loads(r.out)["runs"][0]["results"][0]
    assert after["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert after["partialFingerprints"] == before["partialFingerprints"]


def test_related_locations_are_linked_from_the_message():
    from mlcost_lint.engine import all_rules
    from mlcost_lint.model.core import Location, Related
    from mlcost_lint.report import ReportInput
    from mlcost_lint.report.sarif import build_log, _to_json
    from mlcost_lint.rule import Finding, Level

    finding = Finding("MLC603", "Job train [rank 0] has no /dev/shm", Location("k8s/job.yaml", 20, 11),
                      "Job/default/train/template", Level.WARNING,
                      related=(Related(Location("configs/sft.yaml", 9, 1), "dataloader_num_workers = 4"),
                               Related(Location("k8s/job.yaml", 22, 13), "")))
    doc = _to_json(build_log(ReportInput([finding], list(all_rules()), read_source=lambda p: None)))
    result = doc["runs"][0]["results"][0]
    assert result["message"]["text"] == (
        "Job train \\[rank 0\\] has no /dev/shm Related: "
        "[dataloader_num_workers = 4 (configs/sft.yaml:9)](1); [k8s/job.yaml:22](2).")
    assert result["relatedLocations"] == [
        {"id": 1, "message": {"text": "dataloader_num_workers = 4"},
         "physicalLocation": {"artifactLocation": {"uri": "configs/sft.yaml", "uriBaseId": "%SRCROOT%"},
                              "region": {"startLine": 9, "startColumn": 1, "endLine": 9}}},
        {"id": 2, "message": {"text": ""},
         "physicalLocation": {"artifactLocation": {"uri": "k8s/job.yaml", "uriBaseId": "%SRCROOT%"},
                              "region": {"startLine": 22, "startColumn": 13, "endLine": 22}}},
    ]


def test_help_uris_point_at_generated_doc_headings():
    from mlcost_lint.docs import generate, github_anchor, rule_heading
    from mlcost_lint.engine import all_rules
    from mlcost_lint.report.sarif import help_uri

    # (test_integ_docs checks that docs/rules.md is this generated text.)
    headings = [line[4:] for line in generate().splitlines() if line.startswith("### ")]
    anchors = {github_anchor(h) for h in headings}
    for rule in all_rules():
        assert help_uri(rule).split("#", 1)[1] == github_anchor(rule_heading(rule))
        assert help_uri(rule).split("#", 1)[1] in anchors, rule.code


def _validate(path: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(VALIDATOR), *flags, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "SARIF_MULTITOOL_PREFIX": str(MULTITOOL_PREFIX)})


def test_sarif_passes_the_schema_from_the_repository(tmp_path: Path):
    doc = _sarif(tmp_path)
    assert doc["runs"][0]["results"] and sarif_schema_errors(doc) == []
    doc["runs"][0]["results"][0]["level"] = "fatal"      # the check can fail
    assert sarif_schema_errors(doc) == ["runs/0/results/0/level: 'fatal' is not one of "
                                        "['none', 'note', 'warning', 'error']"]


@needs_validator
def test_sarif_passes_schema_and_github_rules(tmp_path: Path):
    _sarif(tmp_path)
    r = _validate(tmp_path / "out.sarif", "--no-multitool")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 error(s)" in r.stdout
    # The only warning left is the line hash that upload-sarif computes itself.
    warnings = [line for line in r.stdout.splitlines() if "WARN" in line]
    assert all("primaryLocationLineHash" in w for w in warnings), warnings


def _multitool_available() -> bool:
    return bool(os.environ.get("SARIF_MULTITOOL")) or \
        (MULTITOOL_PREFIX / "node_modules" / "@microsoft" / "sarif-multitool").is_dir()


@needs_validator
@pytest.mark.skipif(not _multitool_available(),
                    reason="SARIF multitool not installed: npm install --prefix .sarif-tools @microsoft/sarif-multitool")
def test_sarif_passes_the_multitool_github_rules(tmp_path: Path):
    _sarif(tmp_path)
    r = _validate(tmp_path / "out.sarif", "--require-multitool")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[multitool] 0 error(s), 0 warning(s)" in r.stdout, r.stdout


def test_empty_run_is_valid(tmp_path: Path):
    r = run_cli(".", "--format", "sarif", "--no-cache", cwd=tmp_path)
    assert r.code == 0
    (tmp_path / "empty.sarif").write_text(r.out)
    assert json.loads(r.out)["runs"][0]["results"] == []
    assert sarif_schema_errors(json.loads(r.out)) == []
    if VALIDATOR.is_file():
        v = _validate(tmp_path / "empty.sarif", "--no-multitool")
        assert v.returncode == 0, v.stdout
