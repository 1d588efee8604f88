from __future__ import annotations

from typing import Iterator

from mlcost_lint.rule import Category, Confidence, Finding, Level, Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports a `# mlcost-lint: ignore[...]` or `ignore-file[...]` comment
    that suppressed nothing in this run, like ruff's RUF100. When only some
    of the codes in a comment went unused, the message names those codes.

    A code is only called unused when its rule ran: with `--select MLC3`, a
    comment `ignore[MLC102]` is left alone, because MLC102 did not run. A
    bare `ignore` (no codes) is only reported when every rule ran. A code
    that names no rule at all is reported as unknown.

    ## Why is this expensive
    A stale suppression is a blind spot waiting to happen: when the flagged
    line changes again, the comment silently hides the next real finding on
    it, such as a GPU node pool that lost its scale-to-zero setting.

    ## Example
    ```yaml
    # mlcost-lint: ignore[MLC301] we keep every checkpoint for the paper
    save_total_limit: 3
    ```

    ## Fix
    Delete the comment, or the codes in it that no longer match anything.
    To keep a comment on purpose, add `MLC002` to its codes or to
    `per-file-ignores`.
    """

    code = "MLC002"
    name = "unused-suppression"
    level = Level.NOTE
    confidence = Confidence.HIGH
    category = Category.DIAGNOSTICS
    summary = "Suppression comment suppresses nothing"
    fix = "Remove the comment, or the codes in it that match no finding."

    def check(self, project, settings) -> Iterator[Finding]:
        # Nothing to do here: whether a comment was used is only known after
        # every other rule has run and the suppress stage has matched their
        # findings to comments, so the suppress stage emits MLC002
        # (mlcost_lint.suppress.unused_suppressions). This module declares
        # the rule's code, level and docs so that --select/--ignore, the
        # catalogue, SARIF and `explain` treat it like any other rule.
        return iter(())
