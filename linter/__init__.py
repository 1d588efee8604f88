"""mlcost-lint: find cost waste in ML training infrastructure before it ships.

The flow, one module (or package) per stage:

    discover -> parse -> model -> link -> rules -> suppress -> report

- ``discover``: which files to read and what kind each one is.
- ``parse``: text to located trees (HCL expression trees, YAML/JSON documents
  with a position for every key).
- ``model``: typed objects rules reason about (cloud resources, Kubernetes
  workloads, training configs), with Terraform evaluated.
- ``link``: joins across files (workload -> training config, -> node pool,
  data path -> bucket).
- ``engine``: runs the rule catalogue (``mlcost_lint.rules``) over the model.
- ``suppress``: comments, per-file ignores, baselines.
- ``report``: text, JSON, SARIF, GitHub annotations.
"""

__version__ = "0.1.0"

# Where the rule documentation lives (SARIF helpUri, `mlcost-lint explain`).
HOMEPAGE = "https://github.com/mlcost-lint/mlcost-lint"
DOCS_URL = f"{HOMEPAGE}/blob/main/docs/rules.md"
