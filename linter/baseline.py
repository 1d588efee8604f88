"""Baselines: accept today's findings, report only new ones.

``mlcost-lint --write-baseline FILE`` records every current finding;
``mlcost-lint --baseline FILE`` then hides the findings it records. An
entry is keyed by rule code, path and the flagged object's logical address
(the same triple as the SARIF fingerprints), never by line, so edits that
move lines keep matching. Paths are stored relative to the baseline file's
folder, so the same baseline works from any working directory.

The file (JSON, sorted, one entry per key)::

    {
      "version": 1,
      "tool": "mlcost-lint",
      "findings": [
        {"code": "MLC102", "path": "k8s/train.yaml",
         "address": "PyTorchJob/default/llama-sft/Worker",
         "count": 1, "message": "PyTorchJob llama-sft ... (for people; not matched)"}
      ]
    }

``count`` is how many findings share the key (a rule may flag one object
twice); a run with more findings for that key reports the extra ones as new.
Entries that match fewer findings than their count are *stale* (the waste
was fixed, or the object renamed); ``--baseline-report-stale`` lists them.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import field
from pathlib import Path, PurePosixPath

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.rule import Finding

BASELINE_VERSION = 1


class BaselineError(Exception):
    """An unreadable or invalid baseline file: exit 2 with this message."""


Key = tuple[str, str, str]   # (code, path relative to the baseline's folder, address)


@dataclass(frozen=True, slots=True)
class StaleEntry:
    code: str
    path: str            # as stored in the baseline
    address: str
    missing: int         # how many of its count matched nothing


@dataclass(slots=True)
class Baseline:
    folder: Path                                  # paths are relative to this
    counts: Counter = field(default_factory=Counter)
    messages: dict[Key, str] = field(default_factory=dict)


@dataclass(slots=True)
class BaselineMatch:
    new: list[Finding]
    baselined: list[Finding]
    stale: list[StaleEntry]


def _key(finding: Finding, folder: Path, cwd: Path) -> Key:
    path = finding.location.path
    try:
        rel = os.path.relpath((cwd / path).resolve(), folder.resolve())
        path = PurePosixPath(Path(rel).as_posix()).as_posix()
    except (ValueError, OSError):
        pass
    return finding.code, path, finding.address


def build(findings: list[Finding], baseline_file: Path, cwd: Path | None = None) -> dict:
    """The baseline document for ``findings``."""
    cwd = cwd or Path.cwd()
    folder = baseline_file.resolve().parent
    counts: Counter = Counter()
    messages: dict[Key, str] = {}
    for f in findings:
        key = _key(f, folder, cwd)
        counts[key] += 1
        messages.setdefault(key, f.message)
    entries = [{"code": k[0], "path": k[1], "address": k[2], "count": counts[k], "message": messages[k]}
               for k in sorted(counts)]
    return {"version": BASELINE_VERSION, "tool": "mlcost-lint", "findings": entries}


def write(findings: list[Finding], baseline_file: Path, cwd: Path | None = None) -> int:
    """Write the baseline; returns the number of findings it records."""
    doc = build(findings, baseline_file, cwd)
    try:
        baseline_file.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"--write-baseline: cannot write {baseline_file}: {exc.strerror or exc}") from None
    return len(findings)


# A committed baseline is read whole; real ones are a few hundred kB.
MAX_BASELINE_BYTES = 64_000_000


def load(baseline_file: Path) -> Baseline:
    from mlcost_lint.safe_io import NotRegularFile, TooLarge, read_regular

    where = f"--baseline {baseline_file}"
    try:
        raw = json.loads(read_regular(baseline_file, MAX_BASELINE_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{where}: file not found (create it with --write-baseline)") from None
    except NotRegularFile:
        raise BaselineError(f"{where}: not a regular file") from None
    except TooLarge as exc:
        raise BaselineError(f"{where}: file is {exc.size / 1e6:.1f} MB, over the "
                            f"{MAX_BASELINE_BYTES // 1_000_000} MB limit for a baseline") from None
    except OSError as exc:
        raise BaselineError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{where}: not valid JSON: {exc}") from None
    except RecursionError:
        raise BaselineError(f"{where}: not valid JSON: nested too deeply") from None
    except ValueError as exc:   # an integer over Python's 4,300-digit conversion limit
        raise BaselineError(f"{where}: not valid JSON: {str(exc).split(';')[0]}") from None
    if not isinstance(raw, dict) or "version" not in raw:
        raise BaselineError(f"{where}: not an mlcost-lint baseline (no \"version\")")
    if raw["version"] != BASELINE_VERSION:
        shown = repr(raw["version"])
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise BaselineError(f"{where}: unsupported version {shown} (this mlcost-lint reads "
                            f"version {BASELINE_VERSION})")
    entries = raw.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"{where}: \"findings\" must be a list")
    out = Baseline(folder=baseline_file.resolve().parent)
    for i, e in enumerate(entries):
        if not (isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("code", "path", "address"))):
            raise BaselineError(f"{where}: findings[{i}] needs string \"code\", \"path\" and \"address\"")
        count = e.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise BaselineError(f"{where}: findings[{i}].count must be a positive integer")
        key = (e["code"], e["path"], e["address"])
        out.counts[key] += count
        out.messages.setdefault(key, str(e.get("message", "")))
    return out


def apply(findings: list[Finding], baseline: Baseline, cwd: Path | None = None,
          judged_paths: set[str] | None = None, judged_codes: set[str] | None = None) -> BaselineMatch:
    """Split ``findings`` into new and baselined. Stale entries are those not
    used up; only entries this run could have matched are judged stale
    (``judged_codes``: rules that ran; ``judged_paths``: baseline-relative
    paths of the files reported on, None for all)."""
    cwd = cwd or Path.cwd()
    remaining = Counter(baseline.counts)
    new: list[Finding] = []
    baselined: list[Finding] = []
    for f in findings:
        key = _key(f, baseline.folder, cwd)
        if remaining[key] > 0:
            remaining[key] -= 1
            baselined.append(f)
        else:
            new.append(f)
    stale = [StaleEntry(k[0], k[1], k[2], n) for k, n in sorted(remaining.items())
             if n > 0 and (judged_codes is None or k[0] in judged_codes)
             and (judged_paths is None or k[1] in judged_paths)]
    return BaselineMatch(new, baselined, stale)


def relative_paths(display_paths: set[str], baseline: Baseline, cwd: Path | None = None) -> set[str]:
    """Display paths (relative to the working directory) as the baseline stores them."""
    cwd = cwd or Path.cwd()
    out = set()
    for p in display_paths:
        try:
            rel = os.path.relpath((cwd / p).resolve(), baseline.folder)
            out.add(PurePosixPath(Path(rel).as_posix()).as_posix())
        except (ValueError, OSError):
            out.add(p)
    return out
