"""Output formats through the real CLI: text, full (grouped, caret, fix
hint), github annotations, --statistics, colour only on a TTY."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from mlc_testing import run_cli

from .projects import POD, SFT, terraform_project, write

MLC102_MSG = ("Pod trainer pod template lacks cost labels team, project, cost-center (required-tags); "
              "cost allocators read pod labels: add them to metadata.labels")


def _project(tmp_path: Path) -> Path:
    return write(tmp_path, {"pod.yaml": POD, "configs/sft.yaml": SFT})


def test_text_is_one_line_per_finding_with_fixable_marker(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--select", "MLC102,MLC301", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert r.out.splitlines() == [
        "configs/sft.yaml:5:1: MLC301 [warning] [*] transformers config saves a checkpoint "
        "every 500 steps and never deletes one: save_total_limit is not set; set save_total_limit (e.g. 2)",
        f"pod.yaml:3:1: MLC102 [warning] {MLC102_MSG}",
        "Found 2 findings (2 warnings) in 2 files.",
        "[*] 1 fixable with the `--fix` option.",
    ]


def test_full_groups_by_file_with_caret_and_fix(tmp_path: Path):
    _project(tmp_path)
    r = run_cli(".", "--format", "full", "--select", "MLC102,MLC301", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert r.out == (
        "configs/sft.yaml\n"
        "  5:1  warning  MLC301 no-checkpoint-cleanup [*]\n"
        "  transformers config saves a checkpoint every 500 steps and never deletes one: "
        "save_total_limit is not set; set save_total_limit (e.g. 2)\n"
        "    |\n"
        "  5 | save_strategy: steps\n"
        "    | ^^^^^^^^^^^^^\n"
        "    = fix: Set save_total_limit / save_top_k so that old checkpoints are deleted.\n"
        "\n"
        "pod.yaml\n"
        "  3:1  warning  MLC102 missing-cost-labels\n"
        f"  {MLC102_MSG}\n"
        "    |\n"
        "  3 | metadata:\n"
        "    | ^^^^^^^^\n"
        "    = fix: Add the missing keys to the pod template's metadata.labels.\n"
        "\n"
        "Found 2 findings (2 warnings) in 2 files.\n"
        "[*] 1 fixable with the `--fix` option.\n"
    )


def test_full_shows_related_locations_and_expands_tabs(tmp_path: Path):
    from mlcost_lint.model.core import Location, Related
    from mlcost_lint.report import ReportInput
    from mlcost_lint.report.full import render
    from mlcost_lint.rule import Finding, Level

    finding = Finding("MLC102", "msg", Location("a.yaml", 2, 2), "x", Level.WARNING,
                      related=(Related(Location("b.yaml", 7, 1), "config linked here"),))
    text = render(ReportInput([finding], [], 1, read_source=lambda p: ["first", "\tkey: value"]))
    assert text.splitlines() == [
        "a.yaml", "  2:2  warning  MLC102", "  msg",
        "    |", "  2 |     key: value", "    |     ^^^",
        "    = related: b.yaml:7:1: config linked here", "",
        "Found 1 finding (1 warning) in 1 file.",
    ]


def test_full_reads_only_files_with_findings(tmp_path: Path):
    from mlcost_lint.model.core import Location
    from mlcost_lint.report import ReportInput
    from mlcost_lint.report.full import render
    from mlcost_lint.rule import Finding

    read: list[str] = []
    findings = [Finding("MLC102", "m", Location("a.yaml", 1, 1), "x"),
                Finding("MLC102", "m", Location("a.yaml", 2, 1), "y")]
    render(ReportInput(findings, [], 40, read_source=lambda p: read.append(p) or None))
    assert read == ["a.yaml"]


def test_github_annotations(tmp_path: Path):
    write(tmp_path, {"pod.yaml": POD})
    r = run_cli("pod.yaml", "--format", "github", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out.splitlines() == [
        "::warning file=pod.yaml,line=3,col=1,title=MLC102 missing-cost-labels::" + MLC102_MSG]


def test_github_annotation_escapes_properties_and_data():
    from mlcost_lint.model.core import Location
    from mlcost_lint.report import ReportInput
    from mlcost_lint.report.github import render
    from mlcost_lint.rule import Finding, Level

    f = Finding("MLC001", "bad: 100%\nnext", Location("dir,x/a:b.yaml", 2, 4), "a", Level.ERROR)
    assert render(ReportInput([f], [])) == "::error file=dir%2Cx/a%3Ab.yaml,line=2,col=4,title=MLC001::bad: 100%25%0Anext\n"


def test_statistics_text_and_json(tmp_path: Path):
    write(tmp_path, {"a/pod.yaml": POD, "b/pod.yaml": POD.replace("trainer", "other"), "configs/sft.yaml": SFT})
    r = run_cli(".", "--statistics", "--select", "MLC102,MLC301,MLC402", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out.splitlines() == [
        "2  MLC102  [ ] missing-cost-labels",
        "1  MLC301  [*] no-checkpoint-cleanup",
    ]
    r = run_cli(".", "--statistics", "--format", "json", "--select", "MLC102", "--no-cache", cwd=tmp_path)
    assert json.loads(r.out) == [
        {"code": "MLC102", "name": "missing-cost-labels", "level": "warning", "count": 2, "fixable": False}]


def _run_on_tty(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal and return what it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mlcost_lint", *args], cwd=cwd, stdout=slave,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode()


def test_colour_only_on_tty_and_no_color_respected(tmp_path: Path):
    write(tmp_path, {"pod.yaml": POD})
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    args = ["pod.yaml", "--format", "full", "--no-cache"]
    coloured = _run_on_tty(args, tmp_path, env)
    assert "\x1b[33mwarning\x1b[0m" in coloured and "\x1b[1mpod.yaml\x1b[0m" in coloured
    plain = _run_on_tty(args, tmp_path, {**env, "NO_COLOR": "1"})
    assert "\x1b[" not in plain and "warning  MLC102" in plain
    piped = run_cli(*args, cwd=tmp_path, env={"NO_COLOR": ""})
    assert "\x1b[" not in piped.out
    text_tty = _run_on_tty(["pod.yaml", "--no-cache"], tmp_path, env)
    assert "\x1b[33mMLC102\x1b[0m" in text_tty


def test_findings_in_related_files_keep_terraform_context(tmp_path: Path):
    terraform_project(tmp_path)
    r = run_cli("infra", "--select", "MLC203", "--format", "json", "--no-cache", cwd=tmp_path)
    doc = json.loads(r.out)
    assert [(f["code"], f["path"], f["line"]) for f in doc["findings"]] == [("MLC203", "infra/nodes.tf", 9)]
