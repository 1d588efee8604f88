"""The shipped, dated price table of accelerator instance types and its
lookups (:mod:`.table`), and the script that builds it from a SkyPilot
catalog (:mod:`.build`). Turning a finding's quantity into money is
:mod:`mlcost_lint.pricing`."""

from mlcost_lint.prices.table import (PriceFileError, PriceRow, PriceTable, TableInfo, load, parse_table,
                                      shipped)

__all__ = ["PriceFileError", "PriceRow", "PriceTable", "TableInfo", "load", "parse_table", "shipped"]
