"""HCL (Terraform .tf / .tfvars) to a located, picklable expression tree.

Interface (owned by the Terraform work; see mlcost_lint.model.terraform):

    parse_hcl(text: str, path: str) -> HclBody
    HclSyntaxError(message, line, column)
"""

from __future__ import annotations


class HclSyntaxError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def parse_hcl(text: str, path: str):  # pragma: no cover - replaced by the real converter
    raise HclSyntaxError("HCL parsing not implemented yet")
