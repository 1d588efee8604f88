"""The formats users plug into other tools, through the real CLI (issue 15,
point 5): rdjson (reviewdog), gitlab (Code Quality), junit, and github's
ordering, annotation limits and job summary. Golden outputs: every field is
pinned, and each test checks the format's own rules (reviewdog's severity
names and 1-based exclusive-end ranges, GitLab's required keys, severities
and unique fingerprints, JUnit's counts)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from mlc_testing import run_cli

ROOT = Path(__file__).resolve().parent.parent
SFT = (ROOT / "tests" / "integrations" / "data" / "fix" / "sft_before.yaml").read_text()
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: c
      image: x
"""
DOCS = "https://github.com/mlcost-lint/mlcost-lint/blob/main/docs/rules.md"
MLC301 = ("transformers config saves a checkpoint every 500 steps and never deletes one: save_total_limit is "
          "not set; set save_total_limit (e.g. 2)")
MLC102 = ("Pod a pod template lacks cost label team (required-tags); cost allocators read pod labels: add it to "
          "metadata.labels")


def _project(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "sft.yaml").write_text(SFT)
    (tmp_path / "pod.yaml").write_text(POD.format(name="a"))
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["team"]\n')
    return tmp_path


def test_rdjson_golden_with_the_fix_as_a_suggestion(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--format", "rdjson", "--select", "MLC102,MLC301", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert json.loads(r.out) == {
        "source": {"name": "mlcost-lint", "url": "https://github.com/mlcost-lint/mlcost-lint"},
        "diagnostics": [
            {"message": MLC301,
             "location": {"path": "configs/sft.yaml", "range": {"start": {"line": 5, "column": 1}}},
             "severity": "WARNING",
             "code": {"value": "MLC301", "url": f"{DOCS}#mlc301-no-checkpoint-cleanup"},
             # Insert (start == end) before line 7: right after save_steps, as --fix writes it.
             "suggestions": [{"range": {"start": {"line": 7, "column": 1}, "end": {"line": 7, "column": 1}},
                              "text": "save_total_limit: 2\n"}]},
            {"message": MLC102,
             "location": {"path": "pod.yaml", "range": {"start": {"line": 3, "column": 1}}},
             "severity": "WARNING",
             "code": {"value": "MLC102", "url": f"{DOCS}#mlc102-missing-cost-labels"}},
        ]}
    # The suggestion is exactly what --fix writes.
    lines = SFT.splitlines(keepends=True)
    suggested = "".join(lines[:6]) + "save_total_limit: 2\n" + "".join(lines[6:])
    assert run_cli(".", "--fix", "--select", "MLC301", "--no-cache", cwd=tmp_path).code == 0
    assert (tmp_path / "configs" / "sft.yaml").read_text() == suggested


def test_gitlab_code_quality_golden_and_stable_fingerprints(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--format", "gitlab", "--select", "MLC102,MLC301", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    issues = json.loads(r.out)
    fingerprints = [i.pop("fingerprint") for i in issues]
    assert issues == [
        {"type": "issue", "check_name": "MLC301 no-checkpoint-cleanup", "description": MLC301,
         "content": {"body": issues[0]["content"]["body"]}, "categories": ["Performance"], "severity": "major",
         "location": {"path": "configs/sft.yaml", "lines": {"begin": 5}}},
        {"type": "issue", "check_name": "MLC102 missing-cost-labels", "description": MLC102,
         "content": {"body": "Workload pod template lacks required cost labels. Fix: Add the missing keys to the "
                             "pod template's metadata.labels."},
         "categories": ["Performance"], "severity": "major",
         "location": {"path": "pod.yaml", "lines": {"begin": 3}}},
    ]
    assert all(len(fp) == 32 and int(fp, 16) >= 0 for fp in fingerprints) and len(set(fingerprints)) == 2
    # Same as the JSON format's fingerprint; unchanged when lines move.
    j = json.loads(run_cli(".", "--format", "json", "--select", "MLC102,MLC301", "--no-cache", cwd=tmp_path).out)
    assert [f["fingerprint"] for f in j["findings"]] == fingerprints
    (tmp_path / "pod.yaml").write_text("# moved down\n\n" + POD.format(name="a"))
    moved = json.loads(run_cli(".", "--format", "gitlab", "--select", "MLC102,MLC301", "--no-cache",
                               cwd=tmp_path).out)
    assert [i["fingerprint"] for i in moved] == fingerprints
    assert moved[1]["location"]["lines"] == {"begin": 5}


def test_junit_golden(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--format", "junit", "--select", "MLC102,MLC301", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert r.out == f"""\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="mlcost-lint" tests="2" failures="2" errors="0">
  <testsuite name="configs/sft.yaml" tests="1" failures="1" errors="0">
    <testcase classname="configs/sft.yaml" name="MLC301 no-checkpoint-cleanup at 5:1" file="configs/sft.yaml" line="5">
      <failure type="MLC301" message="{MLC301}">configs/sft.yaml:5:1: MLC301 [warning] {MLC301}</failure>
    </testcase>
  </testsuite>
  <testsuite name="pod.yaml" tests="1" failures="1" errors="0">
    <testcase classname="pod.yaml" name="MLC102 missing-cost-labels at 3:1" file="pod.yaml" line="3">
      <failure type="MLC102" message="{MLC102}">pod.yaml:3:1: MLC102 [warning] {MLC102}</failure>
    </testcase>
  </testsuite>
</testsuites>
"""
    ET.fromstring(r.out.split("\n", 1)[1])   # well-formed
    clean = run_cli("pod.yaml", "--format", "junit", "--select", "MLC301", "--no-cache", cwd=tmp_path)
    root = ET.fromstring(clean.out.split("\n", 1)[1])
    assert (clean.code, root.attrib) == (0, {"name": "mlcost-lint", "tests": "1", "failures": "0", "errors": "0"})
    assert [c.attrib["name"] for c in root.iter("testcase")] == ["no findings in 1 file"]


def _many_pods(tmp_path: Path, n: int) -> None:
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["team"]\n')
    for i in range(n):
        (tmp_path / f"pod{i:02d}.yaml").write_text(POD.format(name=f"p{i:02d}"))


def test_github_errors_first_within_the_annotation_limits_and_the_full_summary(tmp_path: Path):
    _many_pods(tmp_path, 12)
    # An error-level finding that sorts last by path: it must still come first.
    (tmp_path / "zz.tf").write_text('resource "aws_instance" "t" {\n  ami = "a"\n  instance_type = "p4d.24xlarge"\n'
                                    '  tags = { team = "x" }\n}\n')
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["team"]\n[policy]\n'
                                                'allowed-gpu-types = ["L4"]\n')
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    r = run_cli(".", "--format", "github", "--select", "MLC102,MLC702", "--no-cache", cwd=tmp_path,
                env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.code == 1, r.err
    lines = r.out.splitlines()
    assert lines[0] == ("::error file=zz.tf,line=3,col=3,title=MLC702 policy-violation::aws_instance.t "
                        "(p4d.24xlarge) uses A100-40 GPUs, not in allowed-gpu-types [L4]; use an allowed GPU type")
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(warnings) == 10
    assert warnings[0] == ("::warning file=pod00.yaml,line=3,col=1,title=MLC102 missing-cost-labels::Pod p00 pod "
                           "template lacks cost label team (required-tags); cost allocators read pod labels: add it "
                           "to metadata.labels")
    assert lines[-1] == ("mlcost-lint: 2 more findings not annotated (GitHub shows 10 per level and step): every "
                         "finding is in the job summary ($GITHUB_STEP_SUMMARY) and in --format sarif")
    assert len(lines) == 12
    md = summary.read_text().splitlines()
    assert md[0] == "earlier step"                    # appended, never overwritten
    assert md[1] == "### mlcost-lint: 13 findings (1 error, 12 warnings) in 13 files"
    # no finding has a price: no top-by-cost table, every finding in one table
    assert md[2:7] == ["", "#### All findings", "", "| level | rule | where | finding | cost |", "|---|---|---|---|---|"]
    rows = md[7:]
    assert len(rows) == 13 and rows[0].startswith("| error | MLC702 ")
    assert rows[12] == ("| warning | MLC102 missing-cost-labels | `pod11.yaml:3` | Pod p11 pod template lacks cost "
                        "label team (required-tags); cost allocators read pod labels: add it to metadata.labels |  |")


def test_github_without_a_step_summary_and_a_clean_run(tmp_path: Path):
    _many_pods(tmp_path, 1)
    r = run_cli(".", "--format", "github", "--select", "MLC301", "--no-cache", cwd=tmp_path,
                env={"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})
    assert (r.code, r.out) == (0, "")
    assert (tmp_path / "s.md").read_text() == "### mlcost-lint\n\nNo findings in 1 file.\n"
    r = run_cli(".", "--format", "github", "--no-cache", cwd=tmp_path,
                env={"GITHUB_STEP_SUMMARY": str(tmp_path / "missing" / "s.md")})
    assert r.code == 1
    assert r.err.startswith("mlcost-lint: cannot write the job summary to $GITHUB_STEP_SUMMARY: ")
