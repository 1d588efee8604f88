"""Discovery habits through the real CLI (issue 15, points 1, 2 and 8):
.gitignore respected by default, --exclude/--extend-exclude, an explicit
but excluded file says so, [tool.mlcost_lint] refused, HCL block-comment
suppressions, the one line that counts what was skipped and why, and a
changed file that is not ours costs nothing and prints nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mlc_testing import run_cli

from mlcost_lint.gitignore import GitIgnore, git_root, parse_lines

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
CONFIG = 'required-tags = ["team"]\n'


def _finding(path: str, name: str) -> str:
    return (f"{path}:3:1: MLC102 [warning] Pod {name} pod template lacks cost label team (required-tags); "
            "cost allocators read pod labels: add it to metadata.labels")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return _write(tmp_path, {
        ".mlcost-lint.toml": CONFIG,
        ".gitignore": "build/\n*.generated.yaml\n!keep.generated.yaml\n",
        ".git/info/exclude": "scratch/\n",
        "pod.yaml": POD.format(name="a"),
        "build/pod.yaml": POD.format(name="b"),
        "x.generated.yaml": POD.format(name="c"),
        "keep.generated.yaml": POD.format(name="d"),
        "sub/.gitignore": "local.yaml\n",
        "sub/local.yaml": POD.format(name="e"),
        "sub/shared.yaml": POD.format(name="f"),
        "scratch/pod.yaml": POD.format(name="g"),
    })


def test_gitignore_is_respected_by_default_and_counted(tmp_path: Path):
    _repo(tmp_path)
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.code == 1, r.err
    assert r.out.splitlines() == [
        _finding("keep.generated.yaml", "d"),
        _finding("pod.yaml", "a"),
        _finding("sub/shared.yaml", "f"),
        "Found 3 findings (3 warnings) in 3 files.",
        "Skipped 4 paths ignored by .gitignore; -v lists them.",
    ]
    assert r.err == ""


def test_verbose_names_the_pattern_and_the_file_it_is_in(tmp_path: Path):
    _repo(tmp_path)
    r = run_cli(".", "--no-cache", "-v", cwd=tmp_path)
    assert r.code == 1
    lines = r.err.splitlines()
    assert "mlcost-lint: folder build: skipped: ignored by .gitignore ('build/' in .gitignore)" in lines
    assert "mlcost-lint: folder scratch: skipped: ignored by .gitignore ('scratch/' in .git/info/exclude)" in lines
    assert "mlcost-lint: file x.generated.yaml: skipped: ignored by .gitignore ('*.generated.yaml' in .gitignore)" \
        in lines
    assert "mlcost-lint: file sub/local.yaml: skipped: ignored by .gitignore ('local.yaml' in sub/.gitignore)" in lines
    assert "mlcost-lint: file pod.yaml: Kubernetes: Pod/a" in lines


def test_gitignore_off_from_the_command_line_and_the_config(tmp_path: Path):
    _repo(tmp_path)
    r = run_cli(".", "--no-cache", "--no-respect-gitignore", cwd=tmp_path)
    assert r.out.splitlines()[-1] == "Found 7 findings (7 warnings) in 7 files."
    (tmp_path / ".mlcost-lint.toml").write_text(CONFIG + "respect-gitignore = false\n")
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines()[-1] == "Found 7 findings (7 warnings) in 7 files."
    assert run_cli(".", "--no-cache", "--respect-gitignore", cwd=tmp_path).out.splitlines()[-2] == \
        "Found 3 findings (3 warnings) in 3 files."


def test_an_ignored_file_named_explicitly_is_linted(tmp_path: Path):
    # As git and ruff: .gitignore decides what a folder walk finds, not what the user names.
    _repo(tmp_path)
    r = run_cli("build/pod.yaml", "--no-cache", "--no-project-context", cwd=tmp_path)
    assert r.out.splitlines() == [_finding("build/pod.yaml", "b"), "Found 1 finding (1 warning) in 1 file."]


def test_exclude_and_extend_exclude_on_the_command_line(tmp_path: Path):
    _write(tmp_path, {".mlcost-lint.toml": CONFIG + 'exclude = ["a.yaml"]\n', "a.yaml": POD.format(name="a"),
                      "gen/b.yaml": POD.format(name="b"), "c.yaml": POD.format(name="c")})
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines()[:-1] == [_finding("c.yaml", "c"), _finding("gen/b.yaml", "b"),
                                       "Found 2 findings (2 warnings) in 2 files."]
    assert r.out.splitlines()[-1] == "Skipped 1 path excluded (exclude / extend-exclude); -v lists them."
    # --exclude replaces the config's list; --extend-exclude adds to it.
    r = run_cli(".", "--no-cache", "--exclude", "gen", cwd=tmp_path)
    assert [line.split(":")[0] for line in r.out.splitlines()[:2]] == ["a.yaml", "c.yaml"]
    r = run_cli(".", "--no-cache", "--extend-exclude", "gen/,c.yaml", cwd=tmp_path)
    assert r.out.splitlines() == ["No findings in 0 files.",
                                  "Skipped 3 paths excluded (exclude / extend-exclude); -v lists them."]


def test_an_explicit_but_excluded_file_says_so_in_one_line(tmp_path: Path):
    _write(tmp_path, {".mlcost-lint.toml": CONFIG + 'exclude = ["generated/"]\n',
                      "generated/pod.yaml": POD.format(name="g"), "pod.yaml": POD.format(name="a")})
    r = run_cli("generated/pod.yaml", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")
    assert r.err == ("mlcost-lint: generated/pod.yaml (by 'generated/') is excluded by the configuration; "
                     "not linted (remove it from exclude / extend-exclude to lint it)\n")
    r = run_cli("pod.yaml", "generated/pod.yaml", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out.splitlines() == [_finding("pod.yaml", "a"), "Found 1 finding (1 warning) in 1 file.",
                                  "Skipped 1 path excluded (exclude / extend-exclude); -v lists them."]
    assert r.err.splitlines() == ["mlcost-lint: generated/pod.yaml (by 'generated/') is excluded by the "
                                  "configuration; not linted (remove it from exclude / extend-exclude to lint it)"]
    assert run_cli("generated/pod.yaml", "-q", "--no-cache", cwd=tmp_path).err == ""


def test_a_git_link_to_nothing_is_a_repository_root_only_where_that_is_the_safe_side(tmp_path: Path):
    """gitignore.git_root: git passes over a ``.git`` link to nothing and
    finds the repository above, and so does the default (discovery's ignore
    files, the project read around explicit files); any_entry stops at it
    (the parse cache's scan roots), as the config search does."""
    from mlcost_lint.config import load_settings

    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    inner.mkdir()
    (inner / ".git").symlink_to(tmp_path / "nowhere")
    (outer / ".mlcost-lint.toml").write_text('ignore = ["MLC204"]\n')
    shown = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=inner, capture_output=True, text=True)
    assert Path(shown.stdout.strip()).resolve() == outer.resolve()
    assert git_root(inner) == outer
    assert git_root(inner, any_entry=True) == inner
    assert load_settings(None, inner).source is None


@pytest.mark.parametrize("section", ["mlcost_lint", "mlcostlint"])
def test_misspelt_pyproject_section_is_refused_with_the_right_spelling(tmp_path: Path, section: str):
    _write(tmp_path, {"pyproject.toml": f'[project]\nname = "x"\n\n[tool.{section}]\nignore = ["MLC102"]\n',
                      "pod.yaml": POD.format(name="a")})
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (2, "")
    assert r.err == (f"mlcost-lint: error: pyproject.toml: [tool.{section}] is not read: the section is "
                     "[tool.mlcost-lint] (with a hyphen)\n")


TF_GPU = """\
provider "aws" {
  region = "us-east-1"
}

%s
resource "aws_instance" "trainer" {
  ami           = "ami-123"
  instance_type = "p4d.24xlarge"
}
"""


MLC101 = ("main.tf:6:1: MLC101 [warning] aws_instance.trainer lacks cost tag team (required-tags); its spend "
          "cannot be attributed; add it to tags or the provider's default_tags")


def test_hcl_block_comment_suppression(tmp_path: Path):
    _write(tmp_path, {".mlcost-lint.toml": CONFIG, "main.tf": TF_GPU % ""})
    r = run_cli(".", "--no-cache", "--select", "MLC101", cwd=tmp_path)
    assert (r.code, r.out) == (1, f"{MLC101}\nFound 1 finding (1 warning) in 1 file.\n")
    (tmp_path / "main.tf").write_text(TF_GPU % "/* mlcost-lint: ignore[MLC101] tagged by the account's SCP */")
    r = run_cli(".", "--no-cache", "--select", "MLC101", cwd=tmp_path)
    assert (r.code, r.out) == (0, "No findings in 1 file.\n"), r.out
    # A block comment naming another code suppresses nothing.
    (tmp_path / "main.tf").write_text(TF_GPU % "/* mlcost-lint: ignore[MLC203] */")
    r = run_cli(".", "--no-cache", "--select", "MLC101", cwd=tmp_path)
    assert (r.code, r.out) == (1, f"{MLC101}\nFound 1 finding (1 warning) in 1 file.\n")


HELM = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-train
spec:
  template:
    spec:
      containers:
        - name: c
          image: {{ .Values.image }}
"""


def test_helm_templates_are_counted_with_what_to_do(tmp_path: Path):
    _write(tmp_path, {".mlcost-lint.toml": CONFIG, "chart/templates/job.yaml": HELM,
                      "chart/templates/cm.yaml": HELM.replace("Job", "ConfigMap"), "chart/values.yaml": "image: x\n",
                      "pod.yaml": POD.format(name="a")})
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines()[-1] == ("Skipped 2 Helm templates (pipe `helm template` output to `mlcost-lint -`); "
                                      "1 YAML/JSON file that is not Kubernetes, training configs or Terraform; "
                                      "-v lists them.")
    r = run_cli(".", "--no-cache", "-v", cwd=tmp_path)
    assert ("mlcost-lint: file chart/templates/job.yaml: skipped: template syntax ({{ ... }}): render it first "
            "(helm template ... | mlcost-lint -)") in r.err.splitlines()
    assert ("mlcost-lint: file chart/values.yaml: not ours: YAML that is not a Kubernetes object, a training "
            "config or Terraform") in r.err.splitlines()


def test_files_that_are_not_ours_cost_nothing_and_print_nothing(tmp_path: Path):
    """pre-commit passes every changed file of the hook's types: a workflow
    or package.json is read alone (the project is not read) and nothing is
    printed."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _write(tmp_path, {".mlcost-lint.toml": CONFIG, "package.json": '{"name": "x", "scripts": {"test": "jest"}}\n',
                      ".github/workflows/ci.yml": "on: [push]\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                                                  "    steps:\n      - run: make\n",
                      "scripts/run.sh": "#!/bin/sh\nmake\n",
                      # A project beside them that would cost time and print findings if it were read.
                      "k8s/pod.yaml": POD.format(name="a"), "k8s/broken.yaml": "apiVersion: v1\nkind: [\n"})
    r = run_cli("package.json", ".github/workflows/ci.yml", "scripts/run.sh", cwd=tmp_path)
    assert (r.code, r.out, r.err) == (0, "", "")
    # Only the three files named were read (the shell script to see whether it is a
    # Slurm job); the project beside them was not (shards r0..rf hold the run's outcome).
    parsed = [p for p in (tmp_path / ".mlcost_lint_cache").rglob("*.pkl") if not p.parent.name.startswith("r")]
    assert len(parsed) == 3
    r = run_cli("package.json", "-v", "--no-cache", cwd=tmp_path)
    assert (r.code, r.out) == (0, "")
    assert r.err == ("mlcost-lint: file package.json: not ours: JSON that is not a Kubernetes object, a training "
                     "config or Terraform\n")
    # With one file of ours among them, the project is read for context as before.
    r = run_cli("package.json", "k8s/pod.yaml", "--no-cache", cwd=tmp_path)
    assert r.code == 1
    assert r.out.splitlines()[0] == _finding("k8s/pod.yaml", "a")


@pytest.mark.parametrize("lines, path, is_dir, ignored", [
    ("build/", "build", True, True),
    ("build/", "build", False, False),                 # a file named build is not a folder
    ("/top.yaml", "top.yaml", False, True),
    ("/top.yaml", "sub/top.yaml", False, False),      # anchored
    ("*.yaml\n!keep.yaml", "keep.yaml", False, False),
    ("*.yaml\n!keep.yaml", "drop.yaml", False, True),
    ("a/**/b.yaml", "a/x/y/b.yaml", False, True),
    ("a/**/b.yaml", "a/b.yaml", False, True),
    ("**/gen", "x/y/gen", True, True),
    ("doc/*.yaml", "doc/sub/x.yaml", False, False),   # * does not cross /
    ("\\#hash.yaml", "#hash.yaml", False, True),
    ("# comment\n\n", "comment", False, False),
    ("file[0-9].yaml", "file7.yaml", False, True),
    ("file[!0-9].yaml", "file7.yaml", False, False),
    ("trailing.yaml   ", "trailing.yaml", False, True),
])
def test_gitignore_patterns(tmp_path: Path, lines: str, path: str, is_dir: bool, ignored: bool):
    gi = GitIgnore()
    (tmp_path / ".gitignore").write_text(lines + "\n")
    gi.enter(tmp_path)
    assert (gi.match(tmp_path / path, is_dir) is not None) is ignored
    assert all(r.source.endswith(".gitignore") for r in parse_lines(lines, str(tmp_path / ".gitignore")))


@pytest.mark.parametrize("top", [".", "./tree", "tree", "tree/../tree", "ABS"])
def test_walk_paths_are_made_absolute_as_normpath_would(tmp_path: Path, monkeypatch, top: str):
    # GitIgnore._abs swaps the walk's top for its absolute path instead of
    # normpath-ing each path: equal for every path a walk makes, odd names too.
    from mlcost_lint.discover import walk_folder

    tree = tmp_path / "tree"
    for folder in ("a", ".hidden/x", "a..b", "..dots", "sub/.git-ish", "sub/deep/er"):
        (tree / folder).mkdir(parents=True, exist_ok=True)
        (tree / folder / "p.yaml").write_text(POD.format(name="p"))
    (tree / "sub" / ".gitignore").write_text("ignored.yaml\n")
    (tree / "sub" / "ignored.yaml").write_text(POD.format(name="i"))
    monkeypatch.chdir(tmp_path if top != "." else tree)
    start = Path(str(tree) if top == "ABS" else top)
    gi = GitIgnore.for_walk(start)
    paths = [str(start)]
    for dirpath, _dirs, files in __import__("os").walk(str(start)):
        paths += [f"{dirpath}/{name}" for name in [*_dirs, *files]]
    slow = GitIgnore()
    assert gi._top and len(paths) > 15
    for p in paths:
        assert gi._abs(p) == slow._abs(p) == __import__("os").path.abspath(p), p
    walk = walk_folder(start, [], tmp_path, tmp_path, respect_gitignore=True)
    kept = sorted(d for d, _ in walk.events if d is not None)
    assert len(kept) == 6 and not any(d.endswith("ignored.yaml") for d in kept), kept


def test_only_listed_ignore_files_are_read_and_watched_besides_every_walked_folder(tmp_path: Path, monkeypatch):
    # A folder's listing says whether it holds a .gitignore: only then is it
    # asked for and watched; every walked folder is watched (a new ignore
    # file moves its stamp), and a folder named .gitignore is no file.
    import os

    from mlcost_lint.discover import walk_folder

    for folder in ("a/b", "c", "d/.gitignore"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "a" / ".gitignore").write_text("x.yaml\n")
    for folder in ("a", "a/b", "c", "d"):
        (tmp_path / folder / "x.yaml").write_text(POD.format(name="x"))
        (tmp_path / folder / "y.yaml").write_text(POD.format(name="y"))
    asked: list[str] = []
    real_lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: (asked.append(os.fspath(p)), real_lstat(p, *a, **k))[1])
    monkeypatch.chdir(tmp_path)
    walk = walk_folder(Path("."), [], tmp_path, tmp_path, respect_gitignore=True)
    kept = sorted(d for d, _ in walk.events if d is not None)
    assert kept == ["a/b/y.yaml", "a/y.yaml", "c/x.yaml", "c/y.yaml", "d/x.yaml", "d/y.yaml"]
    # the ignore files asked for, absolute, in walk order: the top folder's (asked before the
    # walk lists it, with the folders above it up to a git root) and a's; and every walked folder
    assert [p for p in walk.watched if p.endswith("/.gitignore") and p.startswith("/")] == [
        f"{tmp_path}/.gitignore", f"{tmp_path}/a/.gitignore"]
    assert [p for p in walk.watched if not p.endswith(".yaml") and not p.startswith("/")] == [
        ".", "./a", "./a/b", "./c", "./d", "./d/.gitignore"]
    assert sorted(p for p in asked if p.endswith(".gitignore")) == [f"{tmp_path}/.gitignore",
                                                                    f"{tmp_path}/a/.gitignore"]
