"""Slurm batch scripts: discovery by content, the #SBATCH reader with
positions, the model it fills, and hostile inputs (issue 13)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mlc_testing import lint_dir, run_cli, triples
from mlcost_lint.discover import discover, kind_of
from mlcost_lint.model.core import UNKNOWN
from mlcost_lint.model.slurm import build_slurm_job, exported_vars, gres_gpus, time_seconds
from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind
from mlcost_lint.parse.slurm import has_directives, has_shell_shebang, read_slurm

HEADER = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\n"


def _write(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


# -- discovery ------------------------------------------------------------

def test_kinds_by_name():
    assert kind_of("train.slurm") is FileKind.SLURM
    assert kind_of("train.SBATCH") is FileKind.SLURM
    assert kind_of("run_multinode.sh") is FileKind.SHELL
    assert kind_of("train") is None


def test_shebang_sniffing():
    assert has_shell_shebang(b"#!/bin/bash\n")
    assert has_shell_shebang(b"#!/usr/bin/env bash\n")
    assert has_shell_shebang(b"#! /bin/sh -e\n")
    assert not has_shell_shebang(b"#!/usr/bin/env python3\n")
    assert not has_shell_shebang(b"#!/bin/bashful\n")
    assert not has_shell_shebang(b"echo hi\n")


def test_discovery_by_content(tmp_path: Path):
    _write(tmp_path, "slurm/train.slurm", HEADER + "srun python train.py\n")
    _write(tmp_path, "scripts/run_multinode.sh", HEADER + "srun python train.py\n")
    _write(tmp_path, "scripts/setup.sh", "#!/bin/bash\npip install -e .\n")
    _write(tmp_path, "bin/launch", HEADER + "srun python train.py\n")            # no extension, shebang
    _write(tmp_path, "bin/tool", "#!/usr/bin/env python3\nprint(1)\n")
    _write(tmp_path, "LICENSE", "Apache License\n")
    found = discover([str(tmp_path)], exclude=[], root=tmp_path, cwd=tmp_path)
    assert [(f.display, f.kind) for f in found.files] == [
        ("bin/launch", FileKind.SHELL),
        ("scripts/run_multinode.sh", FileKind.SHELL),
        ("scripts/setup.sh", FileKind.SHELL),
        ("slurm/train.slurm", FileKind.SLURM),
    ]
    result = lint_dir(tmp_path, cwd=tmp_path)
    kinds = {pf.path: (pf.kind, pf.skipped_reason) for pf in result.files}
    assert kinds["bin/launch"] == (FileKind.SLURM, None)
    assert kinds["scripts/run_multinode.sh"] == (FileKind.SLURM, None)
    assert kinds["scripts/setup.sh"] == (
        FileKind.SHELL, "no #SBATCH lines before the first command: not a Slurm batch script")
    assert [w.name for w in result.project.kubernetes.workloads] == ["launch", "run_multinode.sh", "train.slurm"]


def test_header_is_the_leading_comment_block():
    assert has_directives("#!/bin/bash\n# comment\n\n#SBATCH -N 1\necho\n")
    assert not has_directives("#!/bin/bash\nset -e\n#SBATCH -N 1\n")
    assert not has_directives("#!/bin/bash\n#  SBATCH -N 1\n#SBATCHX\n")


# -- the reader -----------------------------------------------------------

def test_every_option_form_with_positions():
    text = (
        "#!/bin/bash\n"
        "#SBATCH --nodes=4\n"
        "#SBATCH -N 2 --ntasks-per-node 1   # two per line; a trailing comment\n"
        "#SBATCH --gres=gpu:a100:8\n"
        "#SBATCH -t 1-12:00:00\n"
        "#SBATCH -pgpu\n"
        "#SBATCH --job-name=\"my job\"\n"
        "#SBATCH --exclusive\n"
        "#SBATCH --requeue\n"
        "#SBATCH --signal=B:USR1@120\n"
        "#SBATCH --gpus-per-task=1 --gpus 16\n"
        "set -x\n"
        "#SBATCH --time=UNLIMITED\n"
    )
    script = read_slurm(text)
    got = [(o.name, o.value, o.line, o.column, o.written) for o in script.options]
    assert got == [
        ("--nodes", "4", 2, 9, "--nodes=4"),
        ("--nodes", "2", 3, 9, "-N 2"),
        ("--ntasks-per-node", "1", 3, 14, "--ntasks-per-node 1"),
        ("--gres", "gpu:a100:8", 4, 9, "--gres=gpu:a100:8"),
        ("--time", "1-12:00:00", 5, 9, "-t 1-12:00:00"),
        ("--partition", "gpu", 6, 9, "-pgpu"),
        ("--job-name", "my job", 7, 9, '--job-name="my job"'),
        ("--exclusive", None, 8, 9, "--exclusive"),
        ("--requeue", None, 9, 9, "--requeue"),
        ("--signal", "B:USR1@120", 10, 9, "--signal=B:USR1@120"),
        ("--gpus-per-task", "1", 11, 9, "--gpus-per-task=1"),
        ("--gpus", "16", 11, 27, "--gpus 16"),
    ]
    assert script.header_end == 11
    assert script.ignored == [13]          # after the first command: a comment to sbatch
    assert script.last("--nodes").value == "2"
    assert script.last("--time").value == "1-12:00:00"


@pytest.mark.parametrize("value, expected", [
    ("gpu:8", 8), ("gpu:a100:8", 8), ("gpu", 1), ("gpu:h100", 1), ("gpu:4(S:0-1)", 4),
    ("nvme:1,gpu:2", 2), ("gres/gpu:4", 4), ("nvme:1", None), ("none", None), ("gpu:$N", UNKNOWN),
    ("gpu:2,gpu:a100:2", UNKNOWN),
])
def test_gres_gpus(value, expected):
    assert gres_gpus(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("30", (1800, False)), ("30:15", (1815, False)), ("20:00:00", (72000, False)),
    ("2-00", (172800, False)), ("1-12:30", (131400, False)), ("3-00:00:00", (259200, False)),
    ("UNLIMITED", (0, True)), ("infinite", (0, True)), ("0", (0, True)), ("soon", (UNKNOWN, False)),
    ("1:2:3:4", (UNKNOWN, False)),
])
def test_time_formats(value, expected):
    assert time_seconds(value) == expected


def _job(text: str):
    return build_slurm_job(read_slurm(text), "job.slurm")


@pytest.mark.parametrize("directives, gpus, nodes, tasks", [
    ("#SBATCH --gres=gpu:8\n", 8, 1, 1),
    ("#SBATCH -N 2\n#SBATCH --gpus-per-node=h100:4\n", 4, 2, 1),
    ("#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-task=2\n", 8, 2, 4),
    ("#SBATCH -N 2\n#SBATCH --ntasks=8\n#SBATCH --gpus-per-task=1\n", 4, 2, 4),
    ("#SBATCH -N 4\n#SBATCH --gpus=16\n", 4, 4, 1),
    ("#SBATCH -N 3\n#SBATCH --gpus=16\n", UNKNOWN, 3, 1),             # does not divide
    ("#SBATCH -N 2-4\n#SBATCH --gres=gpu:8\n", 8, UNKNOWN, 1),
    ("#SBATCH --ntasks=8\n#SBATCH --gpus=8\n", UNKNOWN, UNKNOWN, UNKNOWN),
    ("#SBATCH --cpus-per-task=8\n", None, 1, 1),
])
def test_gpus_per_node(directives, gpus, nodes, tasks):
    job = _job("#!/bin/bash\n" + directives + "python x.py\n")
    assert (job.batch.gpus_per_node, job.batch.nodes, job.batch.tasks_per_node) == (gpus, nodes, tasks)
    container = job.templates[0].containers[0]
    assert container.gpu_count() == (0 if gpus is None else gpus)
    assert job.templates[0].replicas == nodes


def test_exports_at_top_level_only():
    text = (
        "#!/bin/bash\n"
        "#SBATCH --gres=gpu:1\n"
        "export NCCL_DEBUG=INFO A=1\n"
        "B=2\n"
        "export B\n"
        "C=3\n"
        "export D=$(hostname)\n"
        "if [ -n \"$X\" ]; then\n"
        "  export E=1\n"
        "fi\n"
        "f() {\n"
        "  export F=1\n"
        "}\n"
        "for i in 1 2; do export G=1; done\n"
        "export H=\"quoted value\"\n"
        "declare -x I=1\n"
        "declare J=1\n"
        "export -n K=1\n"
    )
    env = exported_vars(text, "job.slurm")
    assert {k: (v.value, v.location.line, v.location.column) for k, v in env.items()} == {
        "NCCL_DEBUG": ("INFO", 3, 8),
        "A": ("1", 3, 24),
        "B": ("2", 5, 8),
        "D": (UNKNOWN, 7, 8),
        "H": ("quoted value", 15, 8),
        "I": ("1", 16, 12),
    }


def test_launch_lines_with_continuations_are_read():
    job = _job("#!/bin/bash\n#SBATCH --gres=gpu:8\nNPROC=8\nsrun torchrun \\\n  --nproc_per_node=$NPROC \\\n"
               "  train.py\n")
    from mlcost_lint.link.shell import program_of

    program = program_of(job.templates[0].containers[0])
    assert [([w.text for w in c.words], c.words[0].origin.line) for c in program.commands] == [
        (["srun", "torchrun", "--nproc_per_node=$NPROC", "train.py"], 4),
    ]


# -- hostile inputs -------------------------------------------------------

def _parse(data: bytes, kind: FileKind = FileKind.SLURM, path: str = "job.slurm"):
    return parse_bytes(data, path, kind)


def test_binary_slurm_is_a_parse_error_binary_sh_is_skipped():
    pf = _parse(b"#!/bin/bash\n#SBATCH -N 1\n\x00\x01")
    assert [(e.line, e.column, e.message) for e in pf.errors] == [
        (3, 1, "cannot read file: binary content (NUL byte at offset 25)")]
    sh = _parse(b"\x7fELF\x00\x00", FileKind.SHELL, "tool.sh")
    assert (sh.errors, sh.skipped_reason) == ([], "binary content (NUL byte at offset 4)")


def test_crlf_and_no_trailing_newline():
    pf = _parse(b"#!/bin/bash\r\n#SBATCH --gres=gpu:8\r\n#SBATCH --time=01:00:00\r\nexport NCCL_DEBUG=INFO\r\n"
                b"srun torchrun --nproc_per_node=4 \\\r\n  train.py")
    assert pf.errors == []
    job = build_slurm_job(pf.slurm, pf.path)
    assert job.batch.time_limit == 3600
    env = job.templates[0].containers[0].env
    assert (env["NCCL_DEBUG"].value, env["NCCL_DEBUG"].location.line) == ("INFO", 4)
    from mlcost_lint.link.shell import program_of

    words = [w.text for w in program_of(job.templates[0].containers[0]).commands[-1].words]
    assert words == ["srun", "torchrun", "--nproc_per_node=4", "train.py"]


def test_ten_thousand_line_script_is_bounded(tmp_path: Path):
    body = "".join(f"echo step {i} && VAR{i}=$(date) \\\n  && true\n" for i in range(5000))
    path = _write(tmp_path, "big.slurm", HEADER + body + "srun torchrun --nproc_per_node=2 train.py\n")
    start = time.monotonic()
    result = lint_dir(path, cwd=tmp_path)
    elapsed = time.monotonic() - start
    assert elapsed < 20, elapsed
    assert [(c, line) for c, _p, line, _m in triples(result, "MLC201")] == [("MLC201", 3)]


def test_huge_file_over_the_limit_is_reported(tmp_path: Path):
    _write(tmp_path, "huge.slurm", HEADER + "# " + "x" * (11 * 1024 * 1024) + "\n")
    res = run_cli("huge.slurm", "--format", "json", "--no-cache", "--select", "MLC001", cwd=tmp_path)
    assert res.code == 1, res.err
    assert '"code": "MLC001"' in res.out and "max-file-size-mb" in res.out


def test_unclosed_quotes_and_odd_bytes_do_not_crash(tmp_path: Path):
    _write(tmp_path, "odd.slurm", HEADER + "srun bash -c 'torchrun --nproc_per_node=4 \nexport X=\"\n$(( \n")
    _write(tmp_path, "bom.sh", "\ufeff#!/bin/bash\n#SBATCH --gres=gpu:2\npython train.py\n")
    result = lint_dir(tmp_path, cwd=tmp_path)
    assert [e for pf in result.files for e in pf.errors] == []
    assert sorted(w.name for w in result.project.kubernetes.workloads) == ["bom.sh", "odd.slurm"]


def test_a_parse_worker_reads_a_slurm_scripts_model_without_a_cache():
    # Its words are split where it is parsed (in parallel), and reach the
    # link stage with the model (FileModel.splits); other files' models are
    # read by the parent when there is no cache.
    from mlcost_lint.link.shell import split_of
    from mlcost_lint.parse_stage import _parse_file

    script = HEADER + "export NCCL_DEBUG=WARN\nsrun torchrun --nproc_per_node=8 train.py\n"
    parsed = _parse_file(script.encode(), "jobs/train.sbatch", FileKind.SLURM, 500, False)
    assert parsed.model is not None and [w.name for w in parsed.model.workloads] == ["train.sbatch"]
    assert parsed.model.splits == [(script, split_of(script))] and split_of(script)[1] is True
    config = _parse_file(b"learning_rate: 0.01\nbf16: true\n", "c.yaml", FileKind.YAML, 500, False)
    assert config.model is None
