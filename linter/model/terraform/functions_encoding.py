"""Terraform's encoding functions (``jsonencode``, ``jsondecode``,
``yamldecode``), registered in FUNCTIONS (functions_registry.py) as this
module is imported.

A decoded whole number is an int, as every evaluated number is
(values.normalize_number); a YAML document whose aliases would expand past
the element bound is refused rather than copied.
"""

from __future__ import annotations

import json
from typing import Any

from mlcost_lint.model.core import UNKNOWN, contains_unknown
from mlcost_lint.model.terraform.functions_registry import _str, fn
from mlcost_lint.model.terraform.limits import MAX_ITEMS, MAX_STRING_CHARS, METER, ValueTooLarge, approx_chars, bounded
from mlcost_lint.model.terraform.values import EvalError, normalize_number


@fn()
def jsonencode(v: Any) -> Any:
    if contains_unknown(v):
        return UNKNOWN
    METER.reserve("jsonencode()", chars=approx_chars(v, MAX_STRING_CHARS))
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@fn()
def jsondecode(v: Any) -> Any:
    try:
        data = json.loads(_str(v))
    except ValueError:
        raise EvalError("jsondecode: invalid JSON") from None
    return _normalize_json(data)


def _normalize_json(data: Any) -> Any:
    if isinstance(data, float):
        return normalize_number(data)
    if isinstance(data, list):
        return [_normalize_json(x) for x in data]
    if isinstance(data, dict):
        return {k: _normalize_json(v) for k, v in data.items()}
    return data


@fn()
def yamldecode(v: Any) -> Any:
    from mlcost_lint.yaml_lib import SAFE_LOADER, yaml

    try:
        data = yaml.load(_str(v), Loader=SAFE_LOADER)
    except yaml.YAMLError:
        raise EvalError("yamldecode: invalid YAML") from None
    except RecursionError:
        raise EvalError("yamldecode: too deep") from None
    if not isinstance(data, (dict, list, str, int, float, bool, type(None))):
        return UNKNOWN
    # Aliases are shared references in what the loader built; copying them
    # (_normalize_json) would expand a billion-laughs document to gigabytes.
    if not bounded(data, MAX_ITEMS):
        raise ValueTooLarge(f"yamldecode() expands to over {MAX_ITEMS} nodes (YAML aliases)")
    return _normalize_json(data)
