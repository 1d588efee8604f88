from __future__ import annotations

from typing import Any, Iterator

from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import UNKNOWN, Related
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule
from mlcost_lint.model.gpu_uses import all_gpu_uses


def _alerting(value: Any, enabled_key: str | None = None) -> bool | None:
    """Whether a list of notification blocks holds at least one active alert."""
    if value is UNKNOWN:
        return None
    if not isinstance(value, list):
        return bool(value) if value is not None else False
    result: bool | None = False
    for block in value:
        if not isinstance(block, dict):
            result = None
            continue
        enabled = block.get(enabled_key) if enabled_key else True
        if enabled is UNKNOWN:
            result = None
        elif enabled is not False:
            return True
    return result


def budget_alert(r: CloudResource) -> bool | None:
    """True when a budget resource alerts someone; None when unknown; False
    when it is not a budget or never notifies."""
    if r.type == "aws_budgets_budget":
        return _alerting(r.attrs.get("notification"))
    if r.type == "google_billing_budget":
        threshold = _alerting(r.attrs.get("threshold_rules"))
        if threshold is not False:
            return threshold
        # Programmatic notifications (Pub/Sub, Monitoring channels) alert too.
        updates = r.attrs.get("all_updates_rule")
        if updates is UNKNOWN:
            return None
        for block in updates or []:
            if not isinstance(block, dict):
                return None
            targets = [block.get("pubsub_topic"), block.get("monitoring_notification_channels")]
            if any(t is UNKNOWN for t in targets):
                return None
            if any(t for t in targets):
                return True
        return False
    if r.type.startswith("azurerm_consumption_budget_"):
        return _alerting(r.attrs.get("notification"), "enabled")
    return False


def _budget_modules(project) -> list[str]:
    """Module calls whose source names a budget module (e.g. a registry
    budgets module): their resources are not in the model, so a budget may hide there."""
    return [call.source for call in project.terraform.module_calls
            if call.source is not None and "budget" in call.source.lower()]


class NoBudgetGuardrail(Rule):
    """
    ## What it does
    Flags a scan that defines GPU capacity in Terraform (GPU instances,
    launch templates, node groups/pools, VMs, scale sets, notebooks, ML
    compute, TPU VMs) but no budget that alerts: no `aws_budgets_budget` with
    a `notification`, no `google_billing_budget` with `threshold_rules` (or a
    Pub/Sub / Monitoring `all_updates_rule`), no `azurerm_consumption_budget_*`
    with an enabled `notification`. Reported once, at the first GPU resource
    by path and line. Kubernetes GPU requests alone do not count. Opt-in:
    runs when the config sets `require-budget = true` or the rule is
    selected, because budgets usually live in an account-level repository.

    ## Why is this expensive
    A forgotten GPU node pool or a stuck training job bills thousands a day.
    Without a budget alert the first signal is the monthly invoice.

    ## Example
    ```hcl
    resource "aws_eks_node_group" "gpu" {
      instance_types = ["p4d.24xlarge"]
      # ... and no aws_budgets_budget anywhere
    }
    ```

    ## Fix
    ```hcl
    resource "aws_budgets_budget" "ml" {
      budget_type  = "COST"
      limit_amount = "20000"
      limit_unit   = "USD"
      time_unit    = "MONTHLY"
      notification {
        comparison_operator        = "GREATER_THAN"
        threshold                  = 80
        threshold_type             = "PERCENTAGE"
        notification_type          = "FORECASTED"
        subscriber_email_addresses = ["ml-platform@example.com"]
      }
    }
    ```
    """

    code = "MLC701"
    name = "no-budget-guardrail"
    level = Level.NOTE
    confidence = Confidence.HIGH
    category = Category.GOVERNANCE
    reports_in = frozenset({Reports.CLOUD})
    summary = "GPU capacity without a budget alert"
    fix = "Add a budget with an alert (aws_budgets_budget, google_billing_budget, azurerm_consumption_budget_*)."
    # Budgets usually live in an account-level repository, not beside the GPUs.
    enabled_by = "require_budget"

    def check(self, project, settings) -> Iterator[Finding]:
        # GPU capacity defined in Terraform or a plan (rules.md): not compute YAML of a managed service.
        uses = [u for u in all_gpu_uses(project) if u.resource.origin in ("terraform", "plan", "module-input")]
        if not uses:
            return
        for r in project.terraform.resources:
            if r.mode == "managed" and budget_alert(r) is not False:
                return   # an alerting budget, or one that may alert
        if _budget_modules(project):
            return
        uses.sort(key=lambda u: (u.resource.location.path, u.resource.location.line, u.resource.address))
        first = uses[0]
        # Resources are told apart by identity: `in` on the list compared
        # CloudResources field by field (quadratic in the GPU uses).
        others: list[CloudResource] = []
        seen = {id(first.resource)}
        for u in uses[1:]:
            if id(u.resource) not in seen:
                seen.add(id(u.resource))
                others.append(u.resource)
        more = f" and {len(others)} more GPU resource{'s' if len(others) > 1 else ''}" if others else ""
        yield self.finding(
            f"{first.resource.address} defines GPU capacity ({first.describe()}){more} but the scan "
            "has no budget with an alert; add an aws_budgets_budget with a notification, a "
            "google_billing_budget with threshold_rules or an azurerm_consumption_budget_* with a "
            "notification",
            first.resource.location, first.resource.address,
            related=[*(Related(o.location, f"GPU capacity: {o.address}") for o in others[:10]),
                     *first.resource.related_module_calls()],
            object_line=first.resource.location.line,
        )
