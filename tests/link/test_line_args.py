"""Trainer flags on launch lines are training settings (issue 13): a line
with its own flags is a Trainer config located at the line; a linked
Trainer config is overridden by the flags the line passes."""

from __future__ import annotations

import json
import shutil

import pytest

from mlc_testing import FIXTURES, lint_dir, run_cli
from mlcost_lint.link.line_args import read_flags
from mlcost_lint.link.shell import Word

BASE = FIXTURES / "link" / "line_args"

_FP32_FIX = "set bf16: true (fp16: true on T4/V100 and older GPUs)"
EXPECTED = {
    "azureml": [
        ("MLC301", "positive/azureml/job.yml", 3, 1,
         "launch line python train.py (Trainer arguments) saves a checkpoint every epoch and never deletes one: "
         "save_total_limit is not set; set save_total_limit (e.g. 2)"),
        ("MLC601", "positive/azureml/job.yml", 3, 1,
         "launch line python train.py (Trainer arguments) trains in full fp32 on GPU (run by "
         f"azureml/positive/azureml/job.yml/roberta-finetune): bf16 and fp16 are false; {_FP32_FIX}"),
    ],
    "kubernetes": [
        ("MLC301", "positive/kubernetes/job.yaml", 18, 15,
         "launch line python run_glue.py (Trainer arguments) saves a checkpoint every 500 steps (TrainingArguments "
         "default) and never deletes one: save_total_limit: 0 keeps every checkpoint; set save_total_limit (e.g. 2)"),
        ("MLC402", "positive/kubernetes/job.yaml", 19, 15,
         "launch line python run_glue.py (Trainer arguments) logs at debug level (log_level: debug); "
         "set log_level: warning (or info)"),
    ],
    "skypilot": [
        ("MLC301", "positive/skypilot/task.yaml", 13, 5,
         "launch line torchrun finetune.py (Trainer arguments) saves a checkpoint every 10 steps and never deletes "
         "one: save_total_limit is not set; set save_total_limit (e.g. 2)"),
        ("MLC302", "positive/skypilot/task.yaml", 13, 27,
         "launch line torchrun finetune.py (Trainer arguments) saves a checkpoint every 10 steps, below "
         "min-checkpoint-interval-steps 100: every save stalls the GPUs; raise save_steps to 100 or more"),
    ],
    "slurm-bare": [
        ("MLC301", "positive/slurm-bare/sft.sbatch", 19, 5,
         "launch line srun torchrun train_sft.py (Trainer arguments) saves a checkpoint every 20 steps and never "
         "deletes one: save_total_limit is not set; set save_total_limit (e.g. 2)"),
        ("MLC302", "positive/slurm-bare/sft.sbatch", 19, 5,
         "launch line srun torchrun train_sft.py (Trainer arguments) saves a checkpoint every 20 steps, below "
         "min-checkpoint-interval-steps 100: every save stalls the GPUs; raise save_steps to 100 or more"),
        ("MLC601", "positive/slurm-bare/sft.sbatch", 21, 5,
         "launch line srun torchrun train_sft.py (Trainer arguments) trains in full fp32 on GPU (run by "
         f"slurm/positive/slurm-bare/sft.sbatch): bf16 and fp16 are false; {_FP32_FIX}"),
        ("MLC402", "positive/slurm-bare/sft.sbatch", 22, 5,
         "launch line srun torchrun train_sft.py (Trainer arguments) reports to every installed tracker "
         "(report_to: all); name the trackers you use (e.g. report_to: [wandb])"),
    ],
    "slurm-override": [
        # The line's --save_steps=25 replaces the file's 500: reported at the flag.
        ("MLC302", "positive/slurm-override/launch.sbatch", 8, 5,
         "transformers config (with the flags of launch line accelerate launch sft.py) saves a checkpoint every "
         "25 steps, below min-checkpoint-interval-steps 100: every save stalls the GPUs; raise save_steps to 100 "
         "or more"),
        # The file still has no save_total_limit; the interval is the line's.
        ("MLC301", "positive/slurm-override/recipes/sft.yaml", 7, 1,
         "transformers config (with the flags of launch line accelerate launch sft.py) saves a checkpoint every "
         "25 steps and never deletes one: save_total_limit is not set; set save_total_limit (e.g. 2)"),
    ],
}


def _found(result):
    return [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_positive_exact(case):
    assert _found(lint_dir(BASE / "positive" / case, cwd=BASE)) == EXPECTED[case]


@pytest.mark.parametrize("case", sorted(p.name for p in (BASE / "negative").iterdir()))
def test_negative_silent(case):
    """The line fixes the file's findings (override-fixes); values set at run
    time, hand-written scripts with only generic flags, words that are no
    launch, CPU jobs, and a config that another job runs without the flags."""
    assert _found(lint_dir(BASE / "negative" / case, cwd=BASE)) == []


def test_override_fixes_what_the_file_alone_gets():
    """Without the launch line the file's own findings fire: the line is what
    removes them."""
    alone = lint_dir(BASE / "negative" / "override-fixes" / "recipes", cwd=BASE)
    assert [(f.code, f.location.line) for f in alone.findings] == [("MLC601", 3), ("MLC301", 5)]
    with_line = lint_dir(BASE / "negative" / "override-fixes", cwd=BASE)
    config = with_line.project.training[0]
    assert config.overridden_by == "python train.py"
    assert (config.settings.checkpoint_limit.value, config.settings.precision.value) == (2, "bf16")
    assert config.settings.checkpoint_limit.location.path == "negative/override-fixes/launch.sbatch"
    # The parsed file itself is untouched (it is shared with the parse cache).
    parsed = next(pf for pf in with_line.project.files if pf.path.endswith("sft.yaml"))
    assert "save_total_limit" not in parsed.documents[0].data


def test_cli_json():
    res = run_cli("positive", "--format", "json", "--no-cache", cwd=BASE)
    assert res.code == 1, res.err
    found = [(f["code"], f["path"], f["line"], f["column"], f["message"]) for f in json.loads(res.out)["findings"]]
    assert found == [row for case in sorted(EXPECTED) for row in EXPECTED[case]]
    res = run_cli("negative", "--format", "json", "--no-cache", cwd=BASE)
    assert res.code == 0, res.err
    assert json.loads(res.out)["findings"] == []


def test_fix_never_edits_a_file_for_line_flags(tmp_path):
    """A launch line's own config has no file to add save_total_limit to:
    --fix leaves the SkyPilot task and the Slurm script as they are."""
    target = tmp_path / "case"
    shutil.copytree(BASE / "positive" / "skypilot", target / "skypilot")
    shutil.copytree(BASE / "positive" / "slurm-bare", target / "slurm-bare")
    before = {p.name: p.read_bytes() for p in target.rglob("*") if p.is_file()}
    res = run_cli(".", "--fix", "--no-cache", cwd=target)
    assert res.code == 1, res.err
    assert {p.name: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before


def _words(*texts: str) -> list[Word]:
    return [Word(t, ("script", 0), True) for t in texts]


def test_read_flags_forms():
    args = read_flags(_words("--save-steps=50", "--bf16", "--fp16", "false", "--no_dataloader_pin_memory",
                             "--save_total_limit", "3", "--report_to", "wandb", "--save_steps", "70"))
    assert args.values == {"save_steps": "70", "bf16": True, "fp16": False, "dataloader_pin_memory": False,
                           "save_total_limit": "3", "report_to": "wandb"}
    assert args.strong
    assert not read_flags(_words("--output_dir", "/x", "--max_steps", "10")).strong


def test_read_flags_unknown_and_abbreviated():
    args = read_flags(_words("--save_total", "2", "--bf16", "$BF16", "--save_steps", "${N}", "--output_dir"))
    # An abbreviation argparse may expand, run-time values: unknown; a flag with no value: not read.
    assert args.values == {"save_total_limit": "${--save_total}", "bf16": "${$BF16}", "save_steps": "${N}"}
