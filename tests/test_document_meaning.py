"""The meaning of a file read as documents or a Slurm script
(cache_trees.document_meaning): equal exactly when every stage after the
parse reads the same thing, positions included, so an incremental run may
take the file's findings from the last run (mlcost_lint.incremental)."""

from __future__ import annotations

import pytest

from mlc_testing import printed_by_another_process
from mlcost_lint import cache_trees
from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind

DEPLOYMENT = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dev-box\nspec:\n  template:\n"
              "    spec:\n      containers:\n        - name: shell\n          image: pytorch\n"
              "          command: ['sleep', 'infinity']\n          resources:\n            limits:\n"
              "              nvidia.com/gpu: 1\n")
SBATCH = "#!/bin/bash\n#SBATCH --gpus=8\n#SBATCH --time=02:00:00\nsrun python train.py\n"


def _meaning(text: str, kind: FileKind = FileKind.YAML, path: str = "k8s/dev-box.yaml") -> str | None:
    return cache_trees.document_meaning(parse_bytes(text.encode(), path, kind, max_depth=100))


@pytest.mark.parametrize("edit, same", [
    (lambda t: t + "# reviewed\n\n", True),                                       # lines after the last node
    (lambda t: t.replace("gpu: 1", "gpu: 1  # one is enough"), True),             # an end-of-line comment
    (lambda t: t.replace("image: pytorch", "image: 'pytorch'"), True),            # a quoting style: same value
    (lambda t: t.replace("  template:", "  # why\n  template:"), False),          # a line moved
    (lambda t: t.replace("gpu: 1", "gpu: 2"), False),                             # a value
    (lambda t: t.replace("gpu: 1", "gpu:   1"), True),                            # a mapping value's column: no
                                                                                  # stage reads it (keys are located)
    (lambda t: t.replace("['sleep'", "[ 'sleep'"), False),                        # a list item's column
    (lambda t: t.replace("image: pytorch", "image: token-9f8e7d6c5b4a39281706"), False),   # a secret-looking value
    (lambda t: t + "  bad: [\n", False),                                          # a syntax error
    (lambda t: t + "---\nkind: ConfigMap\n", False),                              # a document added
])
def test_a_yaml_files_meaning_is_its_documents_not_its_bytes(edit, same):
    assert (_meaning(edit(DEPLOYMENT)) == _meaning(DEPLOYMENT)) is same


def test_a_comment_after_the_last_node_moves_the_documents_end_but_not_its_meaning():
    # Document.end_line counts those comments; only --fix reads it, by a finding's line.
    before = parse_bytes(DEPLOYMENT.encode(), "k8s/dev-box.yaml", FileKind.YAML, max_depth=100)
    after = parse_bytes((DEPLOYMENT + "# a\n# b\n").encode(), "k8s/dev-box.yaml", FileKind.YAML, max_depth=100)
    assert after.documents[0].end_line > before.documents[0].end_line
    assert cache_trees.document_meaning(after) == cache_trees.document_meaning(before)


def test_a_slurm_scripts_meaning_is_its_text():
    # The script's text is what the Slurm reader and the launch-line links read:
    # any edit of it, a comment line included, is a change.
    path = "slurm/train.sbatch"
    assert _meaning(SBATCH, FileKind.SLURM, path) == _meaning(SBATCH, FileKind.SLURM, path) is not None
    assert _meaning(SBATCH + "# done\n", FileKind.SLURM, path) != _meaning(SBATCH, FileKind.SLURM, path)
    assert _meaning(SBATCH.replace("--gpus=8", "--gpus=4"), FileKind.SLURM, path) \
        != _meaning(SBATCH, FileKind.SLURM, path)


def test_a_terraform_kind_has_no_document_meaning():
    # A .tf file's meaning is its tree's (cache_trees.meaning_of); .tfvars and
    # plans are compared by their bytes.
    assert _meaning('size = "p4d.24xlarge"\n', FileKind.TERRAFORM_VARS, "terraform.tfvars") is None
    assert _meaning('{"format_version": "1.2"}', FileKind.TERRAFORM_PLAN, "plan.json") is None


def test_a_documents_meaning_is_the_same_in_another_process():
    # The hash of the pickled documents does not depend on the process (hash seed, history).
    code = ("from mlcost_lint import cache_trees; from mlcost_lint.parse import parse_bytes; "
            "from mlcost_lint.parse.document import FileKind; "
            f"p = parse_bytes({DEPLOYMENT.encode()!r}, 'k8s/dev-box.yaml', FileKind.YAML, max_depth=100); "
            "print(cache_trees.document_meaning(p))")
    assert printed_by_another_process(code) == _meaning(DEPLOYMENT)


def test_a_cached_parse_result_carries_its_meaning(tmp_path, monkeypatch):
    # Set where the result is cached (parse_stage._parse_file), so the index
    # of a whole run holds every file's meaning.
    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    (tmp_path / "dev-box.yaml").write_text(DEPLOYMENT)
    monkeypatch.chdir(tmp_path)
    result = lint(["."], Settings(root=tmp_path), LintOptions(cache_dir=tmp_path / "cache", jobs=1))
    assert [pf.meaning for pf in result.files] == [_meaning(DEPLOYMENT, path="dev-box.yaml")]
    uncached = lint(["."], Settings(root=tmp_path), LintOptions(use_cache=False, jobs=1))
    assert [pf.meaning for pf in uncached.files] == [None]
