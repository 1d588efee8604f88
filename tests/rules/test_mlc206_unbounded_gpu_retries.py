"""MLC206 unbounded-gpu-retries: exact findings on the positive fixtures, none on the negatives,
and once through the real CLI."""

from __future__ import annotations

import json

from mlc_testing import FIXTURES, lint_dir, run_cli, triples

CODE = "MLC206"
BASE = FIXTURES / "rules" / CODE

EXPECTED = [
    ('MLC206', 'positive/jobs.yaml', 6, 'Job lora-sweep-17 retries up to 20 times (backoffLimit; max-job-backoff-limit is 6), each retry on 4 GPUs per pod: set backoffLimit to 6 or less'),
    ('MLC206', 'positive/jobs.yaml', 22, 'CronJob hourly-eval uses 1 GPU per run with concurrencyPolicy Allow (default); it runs every 30min at the shortest and activeDeadlineSeconds 3600 does not end a run before the next; overlapping runs double the GPUs: set concurrencyPolicy: Forbid'),
    ('MLC206', 'positive/jobs.yaml', 41, 'CronJob weekday-report uses 1 GPU per run with concurrencyPolicy Allow; its schedule "0 9 * * 1-5" is not a plain minute/hour pattern, so a run may still be going when the next starts; overlapping runs double the GPUs: set concurrencyPolicy: Forbid'),
    ('MLC206', 'positive/jobs.yaml', 64, 'PyTorchJob llama-sft restarts replicas (Master: OnFailure, Worker: ExitCode) with no runPolicy.backoffLimit: a job that fails on start restarts on its GPUs without end; set runPolicy.backoffLimit'),
]


def test_positive_exact():
    assert triples(lint_dir(BASE / "positive"), CODE) == EXPECTED


def test_negative_silent():
    assert triples(lint_dir(BASE / "negative"), CODE) == []


def test_cli_json():
    result = run_cli("positive", "--format", "json", "--select", CODE, cwd=BASE)
    assert result.code == 1, result.err
    data = json.loads(result.out)
    findings = data["findings"] if isinstance(data, dict) else data
    got = [(f["code"], f["path"], f["line"]) for f in findings]
    assert got == [(c, p, line) for c, p, line, _ in EXPECTED]


def test_shortest_gap():
    from mlcost_lint.rules.compute.mlc206_unbounded_gpu_retries import shortest_gap_seconds as gap

    assert gap("0 */6 * * *") == 6 * 3600
    assert gap("*/30 * * * *") == 1800
    assert gap("0 2 * * *") == 86400
    assert gap("0 1,2,23 * * *") == 3600
    assert gap("0,45 9 * * *") == 45 * 60          # 9:00 -> 9:45, then 23h15 to the next day
    assert gap("0 22-23 * * *") == 3600
    assert gap("@daily") == 86400
    assert gap("@weekly") == 7 * 86400
    assert gap("CRON_TZ=Europe/Berlin 0 3 * * *") == 86400
    assert gap("0 9 * * 1-5") is None               # day fields: counted as overlapping
    assert gap("@monthly") is None
    assert gap("0 9 * JAN *") is None


def test_lower_max_backoff_fires_on_default(tmp_path):
    (tmp_path / "job.yaml").write_text((BASE / "negative" / "jobs.yaml").read_text())
    got = triples(lint_dir(tmp_path, max_job_backoff_limit=3), CODE)
    assert (CODE, f"{tmp_path.name}/job.yaml", 6,
            "Job default-backoff retries up to 6 times (backoffLimit default; max-job-backoff-limit is 3), "
            "each retry on 4 GPUs per pod: set backoffLimit to 3 or less") in got
