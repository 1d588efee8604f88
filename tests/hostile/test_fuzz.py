"""Property-based and fuzz tests (the fast profile; bench/fuzz.py is the long one).

Property, for every generated project: lint + every reporter never raise,
no rule or reader lands in a last-resort net, JSON/SARIF parse and agree,
paths stay inside the root, the exit code is 0 or 1, within a time bound.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import (
    FIXTURES, check_tree, dump_document, mutate, mutated_document, seed_files, terraform_module, write_tree,
)

EXAMPLES = int(os.environ.get("MLC_FUZZ_EXAMPLES", "30"))
FAST = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
BOUND_S = 20.0


def _check(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory(prefix="mlc-fuzz-") as tmp:
        root = write_tree(Path(tmp), files)
        outcome = check_tree(root, time_limit_s=BOUND_S)
        assert outcome.ok, "\n".join(outcome.problems)


@FAST
@given(mutated_document("kubernetes"), st.booleans())
def test_kubernetes_documents_with_wrong_shapes(data, as_json):
    _check({"k8s/job." + ("json" if as_json else "yaml"): dump_document(data, as_json)})


@FAST
@given(mutated_document("training"), st.booleans())
def test_training_configs_with_wrong_shapes(data, as_json):
    _check({"configs/train." + ("json" if as_json else "yaml"): dump_document(data, as_json)})


@FAST
@given(terraform_module())
def test_terraform_modules_with_wrong_shapes(files):
    _check({f"infra/{name}": data for name, data in files.items()})


@FAST
@given(mutated_document("kubernetes"), mutated_document("training"), terraform_module())
def test_mixed_projects_link_junk_to_junk(k8s, training, terraform):
    # Linked: the job, the config it may name, and node pools it may select.
    _check({"k8s/job.yaml": dump_document(k8s, False), "configs/train.yaml": dump_document(training, False),
            **{f"infra/{n}": d for n, d in terraform.items()}})


SEEDS = seed_files(FIXTURES)


@FAST
@given(st.sampled_from(SEEDS), st.integers(0, 2**32 - 1))
def test_byte_mutations_of_fixtures(seed_path, seed):
    data = mutate(seed_path.read_bytes(), random.Random(seed))
    _check({seed_path.name: data, "ok/pod.yaml": b"apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n"})


@pytest.mark.parametrize("seed", range(3))
def test_byte_mutations_of_whole_demo_project(seed, tmp_path):
    """Mutate several files of one real project at once (links between broken files)."""
    rng = random.Random(seed)
    demo = FIXTURES / "demo"
    files = {str(p.relative_to(demo)): p.read_bytes() for p in seed_files(demo)}
    for name in rng.sample(sorted(files), k=min(4, len(files))):
        files[name] = mutate(files[name], rng, rounds=4)
    outcome = check_tree(write_tree(tmp_path / "demo", files), time_limit_s=BOUND_S)
    assert outcome.ok, "\n".join(outcome.problems)


# Defects bench/fuzz.py found (shrunk reproducers), now fixed: kept as regressions.

def test_attribute_null_and_block_of_the_same_name(tmp_path):
    outcome = check_tree(write_tree(tmp_path, {"main.tf": b'resource "aws_batch_compute_environment" "a" {\n'
                                                          b"  actions = null\n  actions {\n  }\n}\n"}))
    assert outcome.problems == []


def test_azure_storage_account_kind_is_a_list(tmp_path):
    outcome = check_tree(write_tree(tmp_path, {"main.tf": b'resource "azurerm_storage_account" "a" {\n'
                                                          b"  account_kind = []\n}\n"}))
    assert outcome.problems == []


# -- Terraform function arguments and cache folders (fuzz_targets.py) --------

from hypothesis import Phase  # noqa: E402

from fuzz_targets import check_cache_case, check_function_call, function_call  # noqa: E402

FUNCTION_EXAMPLES = int(os.environ.get("MLC_FUZZ_FUNCTION_EXAMPLES", "200"))


# No shrinking: a failing call is printed whole by check_function_call, and
# shrinking a slow call on a loaded machine took minutes (bench/FUZZ.md).
@settings(max_examples=FUNCTION_EXAMPLES, deadline=None, database=None, derandomize=True,
          phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
@given(function_call())
def test_every_terraform_function_on_random_arguments(call):
    name, args = call
    assert check_function_call(name, args) == []


@pytest.mark.parametrize("seed", range(6))
def test_a_rearranged_cache_folder_changes_nothing(seed, tmp_path):
    problems, done = check_cache_case(tmp_path / "case", random.Random(seed), 4)
    assert not problems, f"after {done}:\n" + "\n".join(problems)
