"""Every rule, every model value (issue 16, item 12): a rule never raises.

Real fixture models (tests/hostile/model_values.py) with random values at
random places, linked before or after the change; every registered rule
runs, then pricing and redaction. A rule that raises is an internal error
for the user (exit 2), so the property is: no RuleFailure, no linker error,
nothing escapes. ``MLC_RULE_VALUES_EXAMPLES`` sets the examples per fixture
set (default 6, a third of that for many changes at once; the long profile
is bench/fuzz.py --targets model).
"""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mlc_testing import run_cli
from model_values import FIXTURES, fixture_sets, run_mutated

EXAMPLES = int(os.environ.get("MLC_RULE_VALUES_EXAMPLES", "6"))
# No shrinking: a deep copy of a model per step made it take minutes, and the
# failure message lists every change made already.
FAST = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
FEWER = settings(FAST, max_examples=max(1, EXAMPLES // 3))
SETS = fixture_sets()

pytestmark = pytest.mark.skipif(not SETS, reason="fixtures/ not present")


def check(name: str, data, n_changes: int, before_links: bool) -> None:
    result = run_mutated(name, data.draw, n_changes, before_links)
    problems = [f"{f.code}: {f.error} ({f.path})\n{f.traceback}" for f in result.failures]
    problems += [f"linker: {e}" for e in result.link_errors]
    assert not problems, "after:\n  " + "\n  ".join(result.changes) + "\n" + "\n".join(problems)


@pytest.mark.parametrize("name", SETS)
@FAST
@given(data=st.data(), n_changes=st.integers(1, 6), before_links=st.booleans())
def test_no_rule_raises_on_any_model_value(name, data, n_changes, before_links):
    check(name, data, n_changes, before_links)


@pytest.mark.parametrize("name", SETS)
@FEWER
@given(data=st.data(), before_links=st.booleans())
def test_no_rule_raises_when_many_values_change_at_once(name, data, before_links):
    check(name, data, 40, before_links)


# -- what the property found, as user input through the CLI ------------------

def test_a_gcs_lifecycle_action_type_that_is_a_map_is_unknown_not_a_crash(tmp_path):
    # Found by the property: `kind in _GCS_MOVES` on a map raised TypeError
    # in MLC303, MLC304 and MLC305 (exit 2, every bucket of the run lost).
    (tmp_path / "main.tf").write_text(
        'resource "google_storage_bucket" "odd" {\n  name     = "odd"\n  location = "US"\n'
        '  versioning { enabled = true }\n  lifecycle_rule {\n    action { type = { kind = "Delete" } }\n'
        '    condition { age = 3 }\n  }\n}\n\n'
        'resource "google_storage_bucket" "plain" {\n  name     = "plain"\n  location = "US"\n'
        '  versioning { enabled = true }\n}\n')
    r = run_cli(".", "--no-cache", "--select", "MLC0,MLC3", cwd=tmp_path)
    assert (r.code, r.err) == (1, "")
    assert r.out.splitlines() == [
        "main.tf:11:1: MLC303 [warning] GCS bucket google_storage_bucket.plain has no lifecycle rule; objects are "
        "kept in the hottest class forever; add a lifecycle_rule (Delete or SetStorageClass) or enable autoclass",
        "main.tf:14:16: MLC304 [warning] GCS bucket google_storage_bucket.plain has versioning enabled but no "
        "lifecycle rule expires noncurrent versions; every overwritten object is billed forever; add a Delete "
        "lifecycle_rule on num_newer_versions or days_since_noncurrent_time",
        "Found 2 findings (2 warnings) in 1 file.",
    ]


MLC208 = FIXTURES / "rules" / "MLC208" / "positive"


@pytest.mark.skipif(not MLC208.is_dir(), reason="fixtures/ not present")
def test_a_volume_named_by_a_list_names_no_mount_and_the_job_keeps_its_finding(tmp_path):
    # Found by the property: a volume `name: [ckpt]` made MLC208 raise
    # (unhashable list as a dict key) for every job of the run.
    shutil.copytree(MLC208, tmp_path / "p")
    jobs = tmp_path / "p" / "jobs.yaml"
    text = jobs.read_text()
    assert "      volumes:\n        - name: ckpt\n" in text
    jobs.write_text(text.replace("      volumes:\n        - name: ckpt\n",
                                 "      volumes:\n        - name: [ckpt]\n          emptyDir: {}\n"
                                 "        - name: ckpt\n"))
    r = run_cli(".", "--no-cache", "--select", "MLC208", cwd=tmp_path / "p")
    assert (r.code, r.err) == (0, "")
    assert [line.split(" [note] ")[0] for line in r.out.splitlines()[:2]] == [
        "jobs.yaml:11:9: MLC208", "jobs.yaml:29:9: MLC208"]
    assert "checkpoints to durable storage (output_dir: /checkpoints/sft (persistent volume at /checkpoints))" \
        in r.out.splitlines()[1]
    assert r.out.splitlines()[2] == "Found 2 findings (2 notes) in 4 files."


def test_a_terraform_function_called_with_the_wrong_number_of_arguments_is_an_error_try_sees(tmp_path):
    # Found by the function fuzz target: tomap({...}, 1) raised a Python
    # TypeError, which try() does not catch, so the whole value was UNKNOWN
    # instead of try()'s fallback (Terraform rejects the call).
    (tmp_path / ".mlcost-lint.toml").write_text('required-tags = ["team"]\n')
    (tmp_path / "main.tf").write_text('resource "aws_instance" "a" {\n  instance_type = "p4d.24xlarge"\n'
                                      '  tags          = try(tomap({ team = "ml" }, 1), {})\n}\n')
    r = run_cli(".", "--no-cache", "--select", "MLC101", cwd=tmp_path)
    assert (r.code, r.err) == (1, "")
    assert r.out.splitlines()[:2] == [
        "main.tf:3:3: MLC101 [warning] aws_instance.a lacks cost tag team (required-tags); its spend cannot be "
        "attributed; add it to tags or the provider's default_tags",
        "Found 1 finding (1 warning) in 1 file.",
    ]


@pytest.mark.parametrize(("name", "args"), [("tomap", ({}, 1)), ("keys", ()), ("lower", ("A", "B")),
                                            ("chunklist", ([1],)), ("format", ())])
def test_wrong_arity_raises_the_evaluators_own_error(name, args):
    from mlcost_lint.model.terraform.functions import FUNCTIONS
    from mlcost_lint.model.terraform.values import EvalError

    with pytest.raises(EvalError, match=rf"^{name}\(\): wrong number of arguments \({len(args)}\)$"):
        FUNCTIONS[name](*args)


def test_an_unknown_managed_instance_type_is_no_truth_test():
    """Found by bench/fuzz.py --targets model: MLC702 tested ``if
    job.instance_type:`` and a SageMaker job whose instance type is UNKNOWN
    (a variable with no value) raised in the rule (exit 2); the spot rule
    would have printed "instance type UNKNOWN"."""
    import copy

    from model_values import fuzz_settings

    from mlcost_lint.engine import RuleFailure, run_rules, selected_rules
    from mlcost_lint.link import link_project
    from mlcost_lint.model.core import UNKNOWN
    import model_values

    project = copy.deepcopy(model_values.base_project("demo-managed"))
    jobs = [w.managed for w in project.kubernetes.workloads if w.managed is not None]
    assert jobs and any(j.instance_type_at is not None for j in jobs)
    for job in jobs:
        job.instance_type = UNKNOWN
    settings = fuzz_settings(FIXTURES / "demo-managed")
    link_project(project, settings)
    failures: list[RuleFailure] = []
    findings = run_rules(project, settings, selected_rules(settings), failures)
    assert failures == []
    assert findings and not any("instance type UNKNOWN" in r.message for f in findings for r in f.related)


BIG_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: big
spec:
  parallelism: 9000000000000000000
  template:
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: p4d.24xlarge
      containers:
        - name: c
          image: x
          resources:
            limits:
              nvidia.com/gpu: 9000000000000000000
"""


def test_an_astronomical_gpu_count_is_priced_not_a_crash(tmp_path):
    # Found by bench/fuzz.py --targets model (seed 41): 9e18 pods x 9e18 GPUs
    # is 10^39 $/h, past decimal's 28-digit default context: the rounding
    # raised InvalidOperation out of the pricing step (a traceback, no output).
    (tmp_path / "job.yaml").write_text(BIG_JOB)
    r = run_cli(".", "--no-cache", "--select", "MLC204", "--format", "json", cwd=tmp_path)
    assert (r.code, r.err) == (1, "")
    import json

    [finding] = json.loads(r.out)["findings"]
    assert finding["line"] == 5 and "81000000000000000000000000000000000000 GPUs" in finding["message"]
    assert finding["cost"]["amount_usd"] > 3e38 and finding["cost"]["period"] == "hour"   # 8.1e37 x $4.10/GPU-h


def test_a_count_past_a_float_is_price_unknown():
    from mlcost_lint.config import Settings
    from mlcost_lint.pricing import HELD, Quantity, Target, pricer_for

    pricer = pricer_for(Settings())
    cost = pricer.cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 10 ** 400, ("node", "nodes"),
                                kind=HELD))
    assert cost.amount_usd is None and cost.basis.startswith("price unknown: ")
    assert "is more than a price can be computed for" in cost.basis


def test_the_arity_read_from_a_function_code_is_what_its_signature_says():
    # functions_registry._arity reads a plain function's code (inspect.signature was most of the table's import)
    import functools
    import inspect

    from mlcost_lint.model.terraform import functions, functions_registry

    def plain(a, b, /, c, d=1, *rest, e, f=2, **kw): ...
    def fixed(a, b=2): ...
    def nothing(): ...

    @functools.wraps(fixed)
    def wrapped(*args): ...

    cases = [plain, fixed, nothing, wrapped, functools.partial(fixed, 1)]
    cases += [f for module in (functions_registry, *functions.FAMILIES) for f in vars(module).values()
              if inspect.isfunction(f) and f.__module__ == module.__name__]
    assert len(cases) > 60
    assert [functions_registry._arity(f) for f in cases] == [functions_registry._arity_by_signature(f) for f in cases]
    assert functions_registry._arity(plain) == (3, 1 << 30) and functions_registry._arity(wrapped) == (1, 2)
