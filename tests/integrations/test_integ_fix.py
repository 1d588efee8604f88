"""--fix and --diff through the real CLI: exact files before and after,
only the changed lines differ, comments/quoting/order kept."""

from __future__ import annotations

from pathlib import Path

from mlc_testing import run_cli

from .projects import write

DATA = Path(__file__).parent / "data" / "fix"


def test_fix_adds_save_total_limit_and_leaves_per_step_logging(tmp_path: Path):
    # v2: logging_steps: 1 is house style (MLC402 no longer reports it), so --fix leaves it.
    write(tmp_path, {"configs/sft.yaml": (DATA / "sft_before.yaml").read_text()})
    r = run_cli(".", "--fix", "--select", "MLC301,MLC402", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "No findings in 1 file.\n"), r.err
    assert r.err == "Fixed 1 finding (0 remaining).\n"
    assert (tmp_path / "configs" / "sft.yaml").read_text() == (DATA / "sft_after.yaml").read_text()


def test_diff_shows_changes_without_writing(tmp_path: Path):
    write(tmp_path, {"sft.yaml": (DATA / "sft_before.yaml").read_text()})
    r = run_cli("sft.yaml", "--diff", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out == (
        "--- a/sft.yaml\n"
        "+++ b/sft.yaml\n"
        "@@ -4,6 +4,7 @@\n"
        " \n"
        " save_strategy: steps\n"
        " save_steps: 500\n"
        "+save_total_limit: 2\n"
        " # Logging: keep curves smooth\n"
        " logging_steps: 1\n"
        " report_to: ['wandb']\n"
    )
    assert r.err == "Would fix 1 finding in 1 file.\n"
    assert (tmp_path / "sft.yaml").read_text() == (DATA / "sft_before.yaml").read_text()
    # Nothing to fix: empty diff, exit 0.
    clean = run_cli("sft.yaml", "--diff", "--select", "MLC102", "--no-cache", cwd=tmp_path)
    assert (clean.code, clean.out) == (0, "")


def test_fix_bf16_only_on_a_bf16_gpu(tmp_path: Path):
    write(tmp_path, {"configs/train.yaml": (DATA / "clf_before.yaml").read_text(),
                     "k8s/job.yaml": (DATA / "clf_job.yaml").read_text()})
    r = run_cli(".", "--fix", "--select", "MLC601", "--no-cache", cwd=tmp_path)
    assert (r.code, r.err) == (0, "Fixed 1 finding (0 remaining).\n"), r.out
    assert (tmp_path / "configs/train.yaml").read_text() == (DATA / "clf_after.yaml").read_text()


def test_no_bf16_fix_on_t4_or_without_a_linked_gpu(tmp_path: Path):
    before = (DATA / "clf_before.yaml").read_text()
    write(tmp_path, {"configs/train.yaml": before,
                     "k8s/job.yaml": (DATA / "clf_job.yaml").read_text().replace("g5.2xlarge", "g4dn.xlarge")})
    r = run_cli(".", "--fix", "--select", "MLC601", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.err == "Fixed 0 findings (1 remaining).\n"
    assert "set fp16: true (T4 has no bf16)" in r.out
    assert (tmp_path / "configs/train.yaml").read_text() == before
    (tmp_path / "k8s/job.yaml").unlink()           # not linked: the GPU is not known
    r = run_cli(".", "--diff", "--select", "MLC601", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")


def test_explicit_bf16_false_is_left_alone(tmp_path: Path):
    before = (DATA / "clf_before.yaml").read_text() + "bf16: false\n"
    write(tmp_path, {"configs/train.yaml": before, "k8s/job.yaml": (DATA / "clf_job.yaml").read_text()})
    r = run_cli(".", "--diff", "--select", "MLC601", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")


def test_nested_and_flow_style_files_keep_every_other_line(tmp_path: Path):
    text = (
        "---\n"
        "# comment at top\n"
        "output_dir: 'out'\n"
        "eval_strategy: \"steps\"\n"
        "logging_steps: 1    # per step!\n"
        "fsdp_config: {min_num_params: 0, backward_prefetch: backward_pre}\n"
        "report_to:\n"
        "  - tensorboard\n"
        "save_steps: 200\n"
    )
    write(tmp_path, {"train.yaml": text})
    r = run_cli("train.yaml", "--fix", "--select", "MLC301,MLC402", "--no-cache", cwd=tmp_path)
    assert r.err == "Fixed 1 finding (0 remaining).\n", r.out
    # Comments, quoting and flow style of every other line kept.
    assert (tmp_path / "train.yaml").read_text() == text.replace(
        "save_steps: 200\n", "save_steps: 200\nsave_total_limit: 2\n")


def test_rewrite_refuses_when_other_lines_would_change():
    from mlcost_lint.fix import YamlEdit, rewrite

    # A key repeated at different indents that ruamel would normalise.
    text = "a:\n   b: 1\nc:\n     - 1\n     -  2\n"
    new, why = rewrite(text, [YamlEdit("x.yaml", 0, (), "d", 5)])
    assert new is None
    assert why == "the YAML could not be rewritten without changing other lines"


def test_json_and_terraform_are_never_rewritten(tmp_path: Path):
    ds = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "steps_per_print": 1\n}\n'
    write(tmp_path, {"ds.json": ds})
    r = run_cli("ds.json", "--diff", "--select", "MLC402", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")
    assert (tmp_path / "ds.json").read_text() == ds


def test_in_place_edit_when_round_trip_would_respell_other_lines(tmp_path: Path):
    # `null`, `True` and a multi-line flow list, which a round-trip dump
    # re-spells; the edit is written in place instead.
    text = (
        "output_dir: /tmp/out\n"
        "per_device_train_batch_size: 8\n"
        "learning_rate: 2.0e-05\n"
        "seed: null\n"
        "gradient_checkpointing: True\n"
        "report_to: [\n"
        "  tensorboard,\n"
        "  wandb\n"
        "]\n"
        "save_strategy: steps  # every 500\n"
        "logging_steps: 1  # every step\n"
        "bf16: True\n"
    )
    write(tmp_path, {"recipe.yaml": text})
    r = run_cli("recipe.yaml", "--diff", "--select", "MLC301", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert [line for line in r.out.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "+save_total_limit: 2"]


def test_in_place_insert_after_anchor_before_leading_comments():
    from mlcost_lint.fix import _edit_in_place, YamlEdit

    text = "save_steps: 500\n\n# logging\nlogging_steps: 10\nflag: True\n"
    new = _edit_in_place(text, [YamlEdit("x.yaml", 0, (), "save_total_limit", 2, ("save_steps",))])
    assert new == "save_steps: 500\nsave_total_limit: 2\n\n# logging\nlogging_steps: 10\nflag: True\n"
