"""Replay (mlcost_lint/replay.py): the same command over an unchanged tree
prints what it printed, without linting; any change to what the run read
lints again, and the output is then that of a run without any cache.

Through the real entry point, in a fresh process each time. A small driver
records whether the command line was imported (it is not, on a replay).
The racy-stamp margin is 0 here (tests cannot wait 3 s after each write);
one test keeps the real margin.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mlc_testing import FIXTURES, ROOT

DRIVER = """
import atexit, os, sys
def _mark():
    with open(os.environ["REPLAY_TEST_MARK"], "w") as fh:
        fh.write("linted" if "mlcost_lint.cli" in sys.modules else "replayed")
        fh.write(" click" if "click" in sys.modules else "")
        # a replay imports no more than it needs (typing was 4 ms of a 50 ms one)
        fh.write(" typing" if "typing" in sys.modules and "mlcost_lint.cli" not in sys.modules else "")
atexit.register(_mark)
_hard_exit = os._exit
def _exit(code):    # the console script ends with os._exit (entry._exit): no atexit then
    _mark()
    _hard_exit(code)
os._exit = _exit
from mlcost_lint.entry import main
sys.argv = ["mlcost-lint", *sys.argv[1:]]
main()
"""


class Runner:
    def __init__(self, tmp_path: Path, cwd: Path) -> None:
        self.tmp = tmp_path
        self.cwd = cwd
        self.driver = tmp_path / "driver.py"
        self.driver.write_text(DRIVER)
        self.mark = tmp_path / "mark"
        self.env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "home"), "_MLCOST_LINT_REPLAY_MARGIN_NS": "0"}
        for name in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"):
            self.env.pop(name, None)

    def __call__(self, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None):
        self.mark.unlink(missing_ok=True)
        proc = subprocess.run([sys.executable, str(self.driver), *args], cwd=self.cwd, capture_output=True,
                              env={**self.env, **(env or {}), "REPLAY_TEST_MARK": str(self.mark)},
                              input=stdin, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr, self.mark.read_text()

    def fresh(self, *args: str):
        """The same command with no cache at all: what any run must print."""
        code, out, err, how = self(*args, "--no-cache")
        assert how == "linted click"
        return code, out, err


@pytest.fixture
def demo(tmp_path: Path):
    tree = tmp_path / "repo"
    shutil.copytree(FIXTURES / "demo", tree)
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    return tree, Runner(tmp_path, tree)


ARGS = (".", "--cache-dir", "../cache")


def _replays(run, *args: str) -> tuple[int, bytes, bytes]:
    first = run(*args)
    # Linted, or replayed when an earlier step of the test left this state.
    assert first[3] in ("linted click", "replayed")
    second = run(*args)
    assert second[3] == "replayed", f"an unchanged tree was not replayed, or imported more: {second[3]}"
    assert second[:3] == first[:3]
    return first[:3]


def test_an_unchanged_tree_is_replayed_byte_for_byte_without_importing_the_cli(demo):
    tree, run = demo
    code, out, err = _replays(run, *ARGS)
    assert code == 1 and b"Found 54 findings" in out
    assert (code, out, err) == run.fresh(*ARGS)
    third = run(*ARGS)
    assert third[3] == "replayed" and third[:3] == (code, out, err)


def test_other_formats_and_options_are_their_own_entries(demo):
    tree, run = demo
    _replays(run, *ARGS)
    code, out, err, how = run(*ARGS, "--format", "json")
    assert how == "linted click" and out.startswith(b"{")
    assert run(*ARGS, "--format", "json")[3] == "replayed"
    assert run(*ARGS, env={"NO_COLOR": "1"})[3] == "linted click"   # the environment is in the key


def _change_then_compare(run, change, *args: str) -> None:
    before = _replays(run, *args)
    change()
    code, out, err, how = run(*args)
    assert how == "linted click", "a changed input was replayed"
    assert (code, out, err) == run.fresh(*args)
    return before, (code, out, err)


def test_an_edited_file_is_linted_again(demo):
    tree, run = demo
    job = tree / "k8s" / "dev-box.yaml"
    before, after = _change_then_compare(run, lambda: job.write_text(job.read_text().replace("dev-box", "devbox2")),
                                         *ARGS)
    assert before != after


def test_a_new_or_removed_file_is_linted_again(demo):
    tree, run = demo
    extra = tree / "k8s" / "copy.yaml"
    _change_then_compare(run, lambda: shutil.copy(tree / "k8s" / "dev-box.yaml", extra), *ARGS)
    _change_then_compare(run, extra.unlink, *ARGS)


def test_a_new_gitignore_or_config_is_linted_again(demo):
    tree, run = demo
    before, after = _change_then_compare(run, lambda: (tree / ".gitignore").write_text("k8s/\n"), *ARGS)
    assert b"k8s/" in before[1] and b"k8s/" not in after[1]
    before, after = _change_then_compare(run, lambda: (tree / ".mlcost-lint.toml").write_text('ignore = ["MLC2"]\n'),
                                         *ARGS)
    assert before != after


def test_an_ignore_file_made_in_a_folder_that_had_none_is_linted_again(demo):
    # Such a folder's .gitignore is not watched itself: the file made there
    # (here renamed into place) moves the folder's stamp, which is.
    tree, run = demo
    draft = tree / "k8s" / "ignore.draft"

    def make() -> None:
        draft.write_text("dev-box.yaml\n")
        draft.rename(tree / "k8s" / ".gitignore")

    before, after = _change_then_compare(run, make, *ARGS)
    assert b"k8s/dev-box.yaml" in before[1] and b"k8s/dev-box.yaml" not in after[1]


def test_a_config_in_a_folder_above_is_linted_again(demo):
    tree, run = demo
    (tree / ".git").rename(tree / ".git-moved")   # the config search stops at the git root: move it up
    os.mkdir(tree / "sub")
    for name in ("k8s", "configs"):
        (tree / name).rename(tree / "sub" / name)
    run.cwd = tree / "sub"
    args = (".", "--cache-dir", "../../cache")
    before, after = _change_then_compare(run, lambda: (tree / ".mlcost-lint.toml").write_text('ignore = ["MLC2"]\n'),
                                         *args)
    assert before != after


def test_a_sniffed_script_and_a_new_venv_are_linted_again(demo):
    tree, run = demo
    script = tree / "slurm" / "train"          # no extension: read when it starts with a shell shebang
    script.write_text("echo hello\n")
    sbatch = (tree / "slurm" / "pretrain-llama.sbatch").read_text()
    before, after = _change_then_compare(run, lambda: script.write_text(sbatch), *ARGS)
    assert b"slurm/train" not in before[1] and b"slurm/train" in after[1]
    before, after = _change_then_compare(run, lambda: (tree / "slurm" / "pyvenv.cfg").write_text("home = /usr\n"),
                                         *ARGS)
    assert b"slurm/" in before[1] and b"slurm/" not in after[1]


def test_a_changed_var_file_is_linted_again(demo):
    tree, run = demo
    tfvars = tree / "infra" / "terraform.tfvars"
    extra = tree.parent / "extra.tfvars"
    extra.write_text(tfvars.read_text())
    args = (*ARGS, "--var-file", str(extra))
    _change_then_compare(run, lambda: extra.write_text(tfvars.read_text() + "\n# changed\n"), *args)


def test_the_pre_commit_shape_replays_and_sees_a_change_in_its_context(demo):
    tree, run = demo
    args = ("k8s/llama-sft-pytorchjob.yaml", "--cache-dir", "../cache")
    config = tree / "configs" / "sft.yaml"
    _change_then_compare(run, lambda: config.write_text(config.read_text() + "\n# changed\n"), *args)


def test_the_files_named_are_checked_first(demo, tmp_path: Path):
    """A pre-commit hook is given the files that changed: the entry's first
    stamp is theirs, so a replay that cannot happen stops at once."""
    import marshal

    from mlcost_lint.cache_io import SIG_LEN

    tree, run = demo
    args = ("k8s/llama-sft-pytorchjob.yaml", "configs/sft.yaml", "--cache-dir", "../cache")
    assert run(*args)[3] == "linted click"
    manifest = marshal.loads(_entry(tmp_path).read_bytes()[SIG_LEN:])[2]
    # the project root the hook reads for context, then the files named
    assert [path for path, _ in manifest[:3]] == [".", "k8s/llama-sft-pytorchjob.yaml", "configs/sft.yaml"]
    assert len(manifest) > 20     # the rest of the project follows
    config = tree / "configs" / "sft.yaml"
    _change_then_compare(run, lambda: config.write_text(config.read_text() + "\n# changed\n"), *args)


def test_a_whole_run_checks_the_files_before_the_folders(demo, tmp_path: Path):
    """An edit moves a file's stamp, not its folder's: the entry lists every
    file linted before any folder, so a run after an edit stops at the
    first file edited instead of stamping every folder first."""
    import marshal
    import stat

    from mlcost_lint.cache_io import SIG_LEN

    tree, run = demo
    assert run(".", "--cache-dir", "../cache")[3] == "linted click"
    manifest = marshal.loads(_entry(tmp_path).read_bytes()[SIG_LEN:])[2]
    kinds = ["folder" if stat.S_ISDIR(stamp[0]) else "file" for _, stamp in manifest if stamp[0] > 0]
    first_folder = kinds.index("folder", 1)      # the path linted, ".", comes first
    linted = sum(1 for p in tree.rglob("*") if p.is_file() and p.suffix in (".tf", ".yaml", ".yml", ".json"))
    assert kinds[1:first_folder] == ["file"] * (first_folder - 1) and first_folder - 1 >= linted
    config = tree / "configs" / "sft.yaml"
    _change_then_compare(run, lambda: config.write_text(config.read_text() + "\n# changed\n"), ".",
                         "--cache-dir", "../cache")


def test_runs_that_write_list_or_read_stdin_are_never_recorded(demo):
    tree, run = demo
    job = (tree / "k8s" / "dev-box.yaml").read_bytes()
    for args, stdin in (((*ARGS, "-v"), None), ((*ARGS, "-o", "../report.txt"), None), ((*ARGS, "--no-cache"), None),
                        (("-", "--cache-dir", "../cache"), job)):
        for _ in range(2):
            assert run(*args, stdin=stdin)[3] == "linted click", args
    assert run(*ARGS, env={"GITHUB_STEP_SUMMARY": str(tree.parent / "summary.md")})[3] == "linted click"
    assert run(*ARGS, env={"GITHUB_STEP_SUMMARY": str(tree.parent / "summary.md")})[3] == "linted click"


def test_files_younger_than_the_margin_are_not_trusted(demo):
    tree, run = demo
    env = {"_MLCOST_LINT_REPLAY_MARGIN_NS": str(3_000_000_000)}   # the default: every file was just copied
    assert run(*ARGS, env=env)[3] == "linted click"
    assert run(*ARGS, env=env)[3] == "linted click"


def _entry(tmp_path: Path) -> Path:
    found = sorted((tmp_path / "cache").glob("v*/p?/p*.pkl"))
    assert len(found) == 1, found
    return found[0]


def test_a_forged_or_altered_entry_is_never_replayed(demo, tmp_path: Path):
    tree, run = demo
    expected = _replays(run, *ARGS)
    entry = _entry(tmp_path)
    blob = entry.read_bytes()
    # Same payload, signature of another key; then a bit flipped in the payload.
    for forged in (b"\0" * 32 + blob[32:], blob[:-1] + bytes([blob[-1] ^ 1])):
        entry.write_bytes(forged)
        code, out, err, how = run(*ARGS)
        assert how == "linted click" and (code, out, err) == expected
        entry.unlink(missing_ok=True)


def test_an_entry_that_is_a_fifo_or_a_link_is_not_read(demo, tmp_path: Path):
    tree, run = demo
    expected = _replays(run, *ARGS)
    entry = _entry(tmp_path)
    saved = tmp_path / "saved.pkl"
    entry.rename(saved)
    entry.symlink_to(saved)          # a link to a good entry: still never followed
    assert run(*ARGS)[3] == "linted click"
    entry.unlink()
    os.mkfifo(entry)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(run(*ARGS)))
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a FIFO entry blocked the run"
    assert result[0][3] == "linted click" and result[0][:3] == expected


def test_an_entry_behind_a_linked_folder_is_not_read(demo, tmp_path: Path):
    """As the parse cache: no link is followed inside the cache folder, so a
    tree cannot point the replay step at a folder elsewhere."""
    tree, run = demo
    expected = _replays(run, *ARGS)
    shard = _entry(tmp_path).parent
    moved = tmp_path / "elsewhere"
    shard.rename(moved)
    shard.symlink_to(moved, target_is_directory=True)   # the same good entry, one link away
    code, out, err, how = run(*ARGS)
    assert how == "linted click" and (code, out, err) == expected
    version = shard.parent
    shard.unlink()
    moved.rename(shard)
    version.rename(tmp_path / "version-elsewhere")
    version.symlink_to(tmp_path / "version-elsewhere", target_is_directory=True)
    assert run(*ARGS)[3] == "linted click"


def test_a_key_inside_the_scanned_tree_is_never_trusted(demo):
    tree, run = demo
    run.env["XDG_CACHE_HOME"] = str(tree / "home")
    for _ in range(2):
        code, out, err, how = run(*ARGS)
        assert how == "linted click" and b"running without the parse cache" in err


def test_every_environment_variable_the_package_reads_is_in_the_key():
    from mlcost_lint import replay

    names = set()
    for folder in ("linter", "rules"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            names |= set(re.findall(r"""environ\.get\(\s*["']([A-Za-z_][A-Za-z0-9_]*)""", text))
            names |= set(re.findall(r"""getenv\(\s*["']([A-Za-z_][A-Za-z0-9_]*)""", text))
            names |= set(re.findall(r"""environ\[\s*["']([A-Za-z_][A-Za-z0-9_]*)""", text))
    assert "NO_COLOR" in names and "XDG_CACHE_HOME" in names     # the search finds them
    missing = {n for n in names if n not in replay.ENV_NAMES and not n.startswith(replay.ENV_PREFIXES)}
    assert not missing, f"read by the package but not in the replay key: {sorted(missing)}"


def test_the_default_cache_folder_name_is_the_caches():
    from mlcost_lint import replay
    from mlcost_lint.cache import DEFAULT_DIR

    assert replay.CACHE_DIR_NAME == DEFAULT_DIR


def test_the_default_cache_beside_the_tree_is_found(demo):
    tree, run = demo
    # The first run makes the cache folder in the tree, which moves the
    # tree folder's stamp during the run: nothing is recorded then.
    assert run(".")[3] == "linted click"
    assert (tree / ".mlcost_lint_cache").is_dir()
    _replays(run, ".")
    _replays(run, "k8s")


def test_an_earlier_runs_permission_is_not_this_runs(tmp_path: Path, monkeypatch):
    """In one process (an editor, a test), a run whose CLI did not allow
    recording (no cache, -v...) must not record under what an earlier run
    allowed: that manifest is another run's."""
    import io

    from mlcost_lint import replay

    class Writer:
        puts: list = []

        def put_payload(self, key, payload):
            self.puts.append(key)
            return True

    monkeypatch.setenv("_MLCOST_LINT_REPLAY_MARGIN_NS", "0")
    monkeypatch.chdir(tmp_path)
    for name in ("stdout", "stderr"):
        monkeypatch.setattr(sys, name, io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    replay.allow([str(tmp_path / "absent")], ["."], Writer())     # the earlier run
    code, capture = replay.begin([".", "--cache-dir", str(tmp_path / "c")])
    assert code is None and capture is not None
    print("this run's output")
    capture.finish(0)                                             # this run allowed nothing
    assert Writer.puts == []
    replay.allow([str(tmp_path / "absent")], ["."], Writer())     # ...and one that does allow is recorded
    code, capture = replay.begin([".", "--cache-dir", str(tmp_path / "c")])
    replay.allow([str(tmp_path / "absent")], ["."], Writer())
    capture.finish(0)
    assert len(Writer.puts) == 1


def test_a_recorded_manifest_replays_only_when_every_stamp_is_an_exact_int_tuple_as_now(tmp_path):
    # replay._unmoved: shape checked in one pass, then each stamp compared
    from mlcost_lint import replay

    (tmp_path / "a.yaml").write_text("x: 1\n")
    paths = [str(tmp_path), str(tmp_path / "a.yaml"), str(tmp_path / ".gitignore")]
    manifest = [(p, replay.path_stamp(p)) for p in paths]
    assert manifest[2][1] == (0,) and replay._unmoved(manifest)
    near = [(p, tuple(float(x) for x in s)) for p, s in manifest]          # equal numbers, not ints
    truthy = [(manifest[2][0], (False,))]                                    # False == 0
    for forged in (near, truthy, [(manifest[0][0], list(manifest[0][1]))], [(manifest[0][0],)],
                   [(manifest[0][0].encode(), manifest[0][1])], [[manifest[0][0], manifest[0][1]]]):
        assert not replay._unmoved(manifest + forged)
    (tmp_path / "a.yaml").write_text("x: 2\n")
    assert not replay._unmoved(manifest)
