"""What the stages after parsing load the first time they run, loaded
ahead of them while parse workers are busy.

A cold run's parent mostly waits while its workers parse: it evaluates
Terraform once the .tf files are in, then models the other files, links,
runs the rules and prices the findings on one CPU after the workers are
done. Each of those stages imports its modules and loads its tables the
first time it runs, which put about 0.25 s of imports and table loading on
that serial end of the run (the real corpus: Terraform evaluation 15 ms,
linkers 57 ms, the rules 76 ms, the GPU catalogue 31 ms, the price table
39 ms, measured in one process). ``load_later_stages`` does it while the
workers parse instead (pipeline.analyse passes it to the parse stage, which
calls it only when it has started worker processes).

Nothing here changes what a run finds: each stage still loads what it
needs itself, and finds it loaded. tests/perf/test_lean_startup.py checks
that a cold run over the demo imports none of our modules after this.
"""

from __future__ import annotations

import importlib

from mlcost_lint.config import Settings

# The modules the later stages import inside their functions (not at the
# top of the modules the run imported before it parses).
LATER_STAGE_MODULES = (
    # Terraform evaluation (model.terraform.build_terraform)
    "mlcost_lint.model.terraform.builder",
    "mlcost_lint.model.terraform.declarations",
    "mlcost_lint.model.terraform.blocks",
    "mlcost_lint.model.terraform.addresses",
    "mlcost_lint.model.terraform.regions",
    "mlcost_lint.model.terraform.functions",
    "mlcost_lint.model.terraform.functions_registry",
    "mlcost_lint.model.terraform.functions_collections",
    "mlcost_lint.model.terraform.functions_numbers",
    "mlcost_lint.model.terraform.functions_strings",
    "mlcost_lint.model.terraform.functions_encoding",
    "mlcost_lint.model.terraform.plan",
    "mlcost_lint.model.terraform.tfjson",
    "mlcost_lint.model.terraform.root_cache",
    "mlcost_lint.model.terraform.registry",
    # Terraform's replace() with a regular expression: an import of 20-45 ms
    # on the critical path where a .tf file has one (the real corpus does)
    "regex",
    # the training-config readers (model.training.detect._reader) and the
    # model's last step (model.build.ProjectBuilder.finish)
    "mlcost_lint.model.training.accelerate",
    "mlcost_lint.model.training.axolotl",
    "mlcost_lint.model.training.deepspeed",
    "mlcost_lint.model.training.lightning",
    "mlcost_lint.model.training.nemo",
    "mlcost_lint.model.training.torchtune",
    "mlcost_lint.model.training.transformers",
    "mlcost_lint.model.kustomize",
    "mlcost_lint.model.managed",
    "mlcost_lint.model.managed_sagemaker",
    # linking (link.link_project)
    "mlcost_lint.link.configs",
    "mlcost_lint.link.data_paths",
    "mlcost_lint.link.launcher",
    "mlcost_lint.link.line_args",
    "mlcost_lint.link.managed",
    "mlcost_lint.link.pools",
    "mlcost_lint.link.slurm",
    # pricing, redaction, fixes and what each file was read as (pipeline.lint)
    "mlcost_lint.pricing",
    "mlcost_lint.prices.build",
    "mlcost_lint.redact",
    "mlcost_lint.cleaned_texts",
    "mlcost_lint.fix",
    "mlcost_lint.fix.training",
    "mlcost_lint.model.read_as",
)


def load_later_stages(settings: Settings) -> None:
    """Import the later stages' modules and the rules, and load the GPU
    catalogue and (unless the run has a price file of its own) the shipped
    price table, each as its stage would on first use."""
    from mlcost_lint.catalogue import gpu_catalogue_tables
    from mlcost_lint.engine import all_rules
    from mlcost_lint.pricing import table_for
    from mlcost_lint.registry import rule_index

    for name in LATER_STAGE_MODULES:
        importlib.import_module(name)
    rule_index()    # what the rules declare (choosing them)
    all_rules()     # every rule module, and the helpers their checks import
    gpu_catalogue_tables()
    if settings.prices_file is None:    # a price file is read (and its errors reported) where prices are
        table_for(settings)
