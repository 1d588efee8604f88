"""The Terraform functions we evaluate. Anything not in FUNCTIONS is UNKNOWN.

Each function takes evaluated arguments; UNKNOWN arguments make the result
UNKNOWN unless the function can still know the answer (``length`` of a list
holding unknown elements). Terraform errors raise EvalError.

The functions are written one module per family (collections, numbers,
strings, encoding), each registering its functions in FUNCTIONS with the
decorator of functions_registry.py as it is imported. This module imports
every family, so whoever takes FUNCTIONS from here (the evaluator) has the
whole table.
"""

from __future__ import annotations

# Imported in the order they register (the table's order).
from mlcost_lint.model.terraform import (
    functions_collections, functions_numbers, functions_strings, functions_encoding,
)
from mlcost_lint.model.terraform.functions_registry import FUNCTIONS

FAMILIES = (functions_collections, functions_numbers, functions_strings, functions_encoding)

__all__ = ["FAMILIES", "FUNCTIONS"]
