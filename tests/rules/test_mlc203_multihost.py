"""MLC203 counts every host of a multi-host Ray worker group (TPU slices)."""

from __future__ import annotations

from mlc_testing import FIXTURES, lint_dir, triples

BASE = FIXTURES / "rules" / "MLC203"


def test_multihost_worker_group_counts_all_hosts():
    got = triples(lint_dir(BASE / "multihost", cwd=BASE), "MLC203")
    assert [(p, line) for _, p, line, _ in got] == [("multihost/tpu-raycluster.yaml", 16)]
    assert "keeps minReplicas: 1 x numOfHosts: 2 x 4 TPU chips = 8 TPU chips running with no job" in got[0][3]
