"""Child-module findings land where the caller can fix them (issue 11 §3.3, §3.5;
rules.md "Where a finding about a child module's resource lands", "Resources
behind a feature flag are linted", "Module sources are matched exactly")."""

from __future__ import annotations

from mlc_testing import FIXTURES, lint_dir, run_cli

import json

TF = FIXTURES / "terraform"


def located(result, code=None):
    return [(f.code, f.location.path, f.location.line, f.address,
             [(r.location.path, r.location.line, r.message) for r in f.related])
            for f in result.findings if code is None or f.code == code]


def test_argument_set_from_a_variable_is_reported_at_the_callers_argument():
    got = located(lint_dir(TF / "caller_inputs", cwd=TF / "caller_inputs", select=["MLC101"]), "MLC101")
    assert got == [
        ("MLC101", "main.tf", 4, "module.a.aws_cloudwatch_log_group.this",
         [("modules/b/main.tf", 8, "tags of module.a.aws_cloudwatch_log_group.this, set from the module call")]),
        # not passed: the module block, once per call
        ("MLC101", "main.tf", 6, "module.b.aws_cloudwatch_log_group.this",
         [("modules/b/main.tf", 8, "tags of module.b.aws_cloudwatch_log_group.this, set from the module call")]),
    ]


def test_local_copy_of_the_s3_module_linted_on_its_own_invents_no_versioning():
    # count = length(keys(var.versioning)) > 0 over the default {}: linted as if on,
    # but with var.versioning unknown inside, not the default that switched it off
    assert located(lint_dir(TF / "s3_module_copy" / "modules" / "s3", cwd=TF)) == []


def test_local_copy_called_with_inputs():
    got = located(lint_dir(TF / "s3_module_copy", cwd=TF / "s3_module_copy"))
    assert got == [
        ("MLC304", "main.tf", 9, "module.versioned.aws_s3_bucket.this[0]",
         [("modules/s3/main.tf", 11, "versioning_configuration.status of "
           "module.versioned.aws_s3_bucket_versioning.this[0], set from the module call"),
          ("modules/s3/main.tf", 1, "the bucket module.versioned.aws_s3_bucket.this[0]")]),
        # the cause (no lifecycle resource) is written inside the module: once, at that line
        ("MLC303", "modules/s3/main.tf", 1, "module.plain.aws_s3_bucket.this[0]",
         [("main.tf", 1, "called from this module block"),
          ("main.tf", 14, "also reached through suspended: module.suspended.aws_s3_bucket.this[0]"),
          ("main.tf", 6, "also reached through versioned: module.versioned.aws_s3_bucket.this[0]")]),
    ]


def test_registry_s3_module_is_modelled_from_its_inputs():
    result = run_cli(".", "--format", "json", "--no-cache", cwd=TF / "s3_module_registry")
    got = [(f["code"], f["path"], f["line"], f["address"]) for f in json.loads(result.out)["findings"]]
    assert got == [
        ("MLC303", "main.tf", 1, "module.plain.aws_s3_bucket.this[0]"),
        ("MLC303", "main.tf", 6, "module.versioned.aws_s3_bucket.this[0]"),
        ("MLC304", "main.tf", 9, "module.versioned.aws_s3_bucket.this[0]"),
        ("MLC303", "main.tf", 14, "module.suspended.aws_s3_bucket.this[0]"),
    ]
