"""Positions inside a SkyPilot ``run: |`` block (issue 13): a finding on a
word of the block reports the word's own line and column, whatever the
block's indentation (an indentation indicator ``|2``, a header comment) and
line endings (CRLF)."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli
from mlcost_lint.parse.yamljson import parse_yaml

BASE = FIXTURES / "managed" / "skypilot-positions"

_MLC302 = ("launch line python train.py (Trainer arguments) saves a checkpoint every 5 steps, below "
           "min-checkpoint-interval-steps 100: every save stalls the GPUs; raise save_steps to 100 or more")
EXPECTED = [
    ("MLC201", "skypilot-positions/indicator.yaml", 4, 3,
     "SkyPilot task pretrain-indicator requests 8 GPUs per node (accelerators: H100:8, line 4) but starts "
     "torchrun --nproc_per_node=4 (skypilot-positions/indicator.yaml:8): 4 GPUs per node idle; request 4 or "
     "start 8 ranks per node"),
    ("MLC207", "skypilot-positions/indicator.yaml", 5, 3,
     "SkyPilot task pretrain-indicator (8 GPUs per node: accelerators: H100:8 on line 4) runs on spot capacity "
     "(use_spot: true) but its run line saves no checkpoints (--save_strategy no): a preemption restarts "
     "training from the start; save checkpoints to a bucket mounted at the output directory and resume from them"),
    ("MLC403", "skypilot-positions/indicator.yaml", 7, 14,
     "NCCL_DEBUG=INFO set in SkyPilot task pretrain-indicator (8 GPUs per node: accelerators: H100:8 on line 4): "
     "NCCL logs every communicator and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it"),
    ("MLC302", "skypilot-positions/nested.yaml", 7, 75, _MLC302),
]


def _found(result):
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]


def test_block_positions_exact():
    result = lint_dir(BASE, cwd=BASE.parent)
    assert _found(result) == EXPECTED
    mlc207 = next(f for f in result.findings if f.code == "MLC207")
    # --save_strategy on the block's third line, 8 columns in (|2: 2 + 6 more spaces).
    assert [(r.location.line, r.location.column, r.message) for r in mlc207.related] == \
        [(9, 21, "--save_strategy no")]
    launch = next(l for l in result.project.links.launches if l.workload.name == "pretrain-indicator")
    assert (launch.evidence.line, launch.evidence.column) == (8, 14)   # --nproc_per_node=4


def test_cli_json():
    res = run_cli("skypilot-positions", "--format", "json", "--no-cache", cwd=BASE.parent)
    assert res.code == 1, res.err
    found = [(f["code"], f["path"], f["line"], f["column"], f["message"]) for f in json.loads(res.out)["findings"]]
    assert found == EXPECTED


def test_crlf_and_header_comment(tmp_path):
    """The same task with CRLF line endings reports the same positions."""
    text = (BASE / "nested.yaml").read_text().replace("\n", "\r\n")
    (tmp_path / "nested.yaml").write_bytes(text.encode())
    result = lint_dir(tmp_path / "nested.yaml", cwd=tmp_path)
    assert _found(result) == [("MLC302", "nested.yaml", 7, 75, _MLC302)]


def test_block_starts_from_the_parser():
    text = ("run: |\r\n  echo a\r\nsetup: |2\r\n     pip install x\r\nitems:\r\n  - run: |-\r\n"
            "      a b\r\nfolded: >\r\n  x\r\nempty: |\r\nlast: 1\r\n")
    doc = parse_yaml(text, "t.yaml")[0]
    assert doc.blocks == {("run",): (2, 3), ("setup",): (4, 3), ("items", 0, "run"): (7, 7)}
    assert doc.data["setup"] == "   pip install x\n"
