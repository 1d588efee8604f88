"""Baselines and unused suppressions (MLC002) through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from mlc_testing import run_cli

from .projects import ORG_CONFIG, POD, write

POD2 = POD.replace("trainer", "other")


def _msg(name: str) -> str:
    return (f"Pod {name} pod template lacks cost labels team, project, cost-center (required-tags); "
            "cost allocators read pod labels: add them to metadata.labels")


# ------------------------------------------------------------ baselines ---

def test_write_baseline_then_only_new_findings(tmp_path: Path):
    write(tmp_path, {"k8s/a.yaml": POD})
    r = run_cli("k8s", "--select", "MLC102", "--write-baseline", "baseline.json", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")
    assert r.err == "mlcost-lint: wrote 1 finding to baseline baseline.json\n"
    assert json.loads((tmp_path / "baseline.json").read_text()) == {
        "version": 1, "tool": "mlcost-lint",
        "findings": [{"code": "MLC102", "path": "k8s/a.yaml", "address": "Pod/default/trainer/template",
                      "count": 1, "message": _msg("trainer")}]}
    # Lines move and a new pod appears: only the new one is reported.
    (tmp_path / "k8s/a.yaml").write_text("# moved\n\n\n" + POD)
    write(tmp_path, {"k8s/b.yaml": POD2})
    r = run_cli("k8s", "--select", "MLC102", "--baseline", "baseline.json", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out.splitlines() == [f"k8s/b.yaml:3:1: MLC102 [warning] {_msg('other')}",
                                  "Found 1 finding (1 warning) in 2 files."]


def test_baseline_paths_are_relative_to_the_baseline_file(tmp_path: Path):
    write(tmp_path, {"k8s/a.yaml": POD})
    run_cli("k8s", "--select", "MLC102", "--write-baseline", "baseline.json", "--no-cache", cwd=tmp_path)
    r = run_cli(".", "--select", "MLC102", "--baseline", "../baseline.json", "--no-cache", cwd=tmp_path / "k8s")
    assert (r.code, r.out) == (0, "No findings in 1 file.\n")


def test_stale_entries_reported_on_request(tmp_path: Path):
    write(tmp_path, {"k8s/a.yaml": POD, "k8s/b.yaml": POD2})
    run_cli("k8s", "--select", "MLC102", "--write-baseline", "baseline.json", "--no-cache", cwd=tmp_path)
    (tmp_path / "k8s/b.yaml").write_text(POD2.replace("metadata:\n  name: other\n",
                                                      "metadata:\n  name: other\n  labels: {team: a, project: b, "
                                                      "cost-center: c}\n"))
    r = run_cli("k8s", "--select", "MLC102", "--baseline", "baseline.json", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out, r.err) == (0, "No findings in 2 files.\n", "")
    r = run_cli("k8s", "--select", "MLC102", "--baseline", "baseline.json", "--baseline-report-stale",
                "--no-cache", cwd=tmp_path)
    assert r.err.splitlines() == [
        "mlcost-lint: 1 stale baseline entry in baseline.json (no longer found; update it with --write-baseline):",
        "  MLC102 k8s/b.yaml Pod/default/other/template",
    ]
    # Entries of rules that did not run are not called stale.
    r = run_cli("k8s", "--select", "MLC101", "--baseline", "baseline.json", "--baseline-report-stale",
                "--no-cache", cwd=tmp_path)
    assert r.err == ""


def test_baseline_counts_repeated_keys(tmp_path: Path):
    from mlcost_lint import baseline
    from mlcost_lint.model.core import Location
    from mlcost_lint.rule import Finding

    f = [Finding("MLC203", "m", Location("a.tf", line, 1), "aws_x.y") for line in (3, 9)]
    doc = baseline.build(f, tmp_path / "b.json", cwd=tmp_path)
    assert doc["findings"] == [{"code": "MLC203", "path": "a.tf", "address": "aws_x.y", "count": 2, "message": "m"}]
    baseline.write(f[:1], tmp_path / "b.json", cwd=tmp_path)
    match = baseline.apply(f, baseline.load(tmp_path / "b.json"), cwd=tmp_path)
    assert (len(match.new), len(match.baselined), match.stale) == (1, 1, [])


def test_bad_baselines_are_one_line_exit_2(tmp_path: Path):
    write(tmp_path, {"pod.yaml": POD})
    cases = {
        "missing.json": None,
        "bad.json": "{not json",
        "old.json": json.dumps({"version": 99, "findings": []}),
        "shape.json": json.dumps({"version": 1, "findings": [{"code": "MLC102"}]}),
    }
    for name, text in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        r = run_cli("pod.yaml", "--baseline", name, "--no-cache", cwd=tmp_path)
        assert r.code == 2, name
        assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err, r.err
        assert r.err.startswith(f"mlcost-lint: error: --baseline {name}: "), r.err
    r = run_cli("pod.yaml", "--baseline-report-stale", cwd=tmp_path)
    assert (r.code, r.err) == (2, "mlcost-lint: error: --baseline-report-stale needs --baseline FILE\n")


# ---------------------------------------------------- unused suppressions ---

SUPPRESSED_POD = """\
apiVersion: v1
kind: Pod
# mlcost-lint: ignore[MLC102] labels are added by the admission webhook
metadata:
  name: trainer
spec:
  containers:
    - name: c
      image: x  # mlcost-lint: ignore[MLC205]
"""


def test_used_suppression_is_silent_unused_one_is_mlc002(tmp_path: Path):
    write(tmp_path, {"pod.yaml": SUPPRESSED_POD})
    r = run_cli("pod.yaml", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines() == [
        "pod.yaml:9:17: MLC002 [note] Suppression comment `ignore[MLC205]` is unused (no MLC205 finding on the "
        "lines it covers); remove it",
        "Found 1 finding (1 note) in 1 file.",
    ]
    assert r.code == 0          # a note is below the default --fail-on warning
    assert run_cli("pod.yaml", "--fail-on", "note", "--no-cache", cwd=tmp_path).code == 1


def test_mlc002_respects_select_and_ignore(tmp_path: Path):
    write(tmp_path, {"pod.yaml": SUPPRESSED_POD})
    # MLC205 did not run: its comment is not judged.
    r = run_cli("pod.yaml", "--select", "MLC102,MLC002", "--no-cache", cwd=tmp_path)
    assert r.out == "No findings in 1 file.\n"
    # MLC002 itself not selected / ignored.
    assert run_cli("pod.yaml", "--select", "MLC2", "--no-cache", cwd=tmp_path).out == "No findings in 1 file.\n"
    assert run_cli("pod.yaml", "--ignore", "unused-suppression", "--no-cache",
                   cwd=tmp_path).out == "No findings in 1 file.\n"


def test_mlc002_partial_unknown_and_file_level(tmp_path: Path):
    write(tmp_path, {"pod.yaml": "# mlcost-lint: ignore-file[MLC301]\n" + SUPPRESSED_POD.replace(
        "ignore[MLC102]", "ignore[MLC102, MLC204, MLC999]").replace("  # mlcost-lint: ignore[MLC205]", "")})
    r = run_cli("pod.yaml", "--format", "json", "--no-cache", cwd=tmp_path)
    found = [(f["code"], f["line"], f["message"], f["address"]) for f in json.loads(r.out)["findings"]]
    assert found == [
        ("MLC002", 1, "Suppression comment `ignore-file[MLC301]` is unused (no MLC301 finding on the files it "
         "covers); remove it", "suppression:ignore-file[MLC301]"),
        ("MLC002", 4, "Suppression comment `ignore[MLC102, MLC204, MLC999]` is unused (no MLC204 finding on the "
         "lines it covers; unknown code MLC999); remove MLC204, MLC999 from it",
         "suppression:ignore[MLC102, MLC204, MLC999]"),
    ]


def test_mlc002_can_itself_be_suppressed(tmp_path: Path):
    write(tmp_path, {"pod.yaml": SUPPRESSED_POD.replace("ignore[MLC205]", "ignore[MLC205, MLC002]")})
    assert run_cli("pod.yaml", "--no-cache", cwd=tmp_path).out == "No findings in 1 file.\n"
    write(tmp_path, {"pod.yaml": SUPPRESSED_POD, ".mlcost-lint.toml": ORG_CONFIG +
                     '[per-file-ignores]\n"pod.yaml" = ["MLC002"]\n'})
    assert run_cli("pod.yaml", "--no-cache", cwd=tmp_path).out == "No findings in 1 file.\n"


def test_bare_ignore_judged_only_when_every_rule_ran(tmp_path: Path):
    # Every rule runs only when the opt-in ones are on too (required-tags, require-budget).
    write(tmp_path, {"pod.yaml": POD.replace("      image: x\n", "      image: x  # mlcost-lint: ignore\n")},
          config=ORG_CONFIG + "require-budget = true\n")
    r = run_cli("pod.yaml", "--ignore", "MLC102", "--no-cache", cwd=tmp_path)
    assert r.out == "No findings in 1 file.\n"
    r = run_cli("pod.yaml", "--select", "MLC002", "--no-cache", cwd=tmp_path)
    assert r.out == "No findings in 1 file.\n"
    r = run_cli("pod.yaml", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines() == [
        f"pod.yaml:3:1: MLC102 [warning] {_msg('trainer')}",
        "pod.yaml:8:17: MLC002 [note] Suppression comment `ignore` suppresses no finding on the lines it covers; "
        "remove it",
        "Found 2 findings (1 warning, 1 note) in 1 file."]
