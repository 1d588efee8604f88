"""The parse-only floor: the same files through the same parsing libraries,
in one process, with nothing else (no mlcost_lint import, no model, no
rules, no positions bookkeeping).

    python bench/floor.py REPO

Terraform (.tf, .tfvars): ``hcl2.parses_to_tree`` (what
mlcost_lint/parse/hcl.py calls). YAML (.yaml, .yml): ``yaml.compose_all``
with the C loader (what mlcost_lint/parse/yamljson.py calls). JSON:
``json.loads``. Prints one JSON line: files, bytes, seconds per kind.
"""

from __future__ import annotations

import json
import os
import sys
import time

SKIP_DIRS = {".git", ".terraform", ".mlcost_lint_cache", "node_modules", "__pycache__", ".venv"}


def walk(root: str) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        out += [os.path.join(folder, f) for f in sorted(files)]
    return out


def main() -> None:
    root = sys.argv[1]
    t0 = time.perf_counter()
    import hcl2
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    hcl2.parses_to_tree('a = 1\n')  # load the grammar cache, as the tool's first parse does
    t_import = time.perf_counter() - t0
    seconds = {"terraform": 0.0, "yaml": 0.0, "json": 0.0}
    counts = {"terraform": 0, "yaml": 0, "json": 0}
    total = 0
    errors = 0
    for path in walk(root):
        lower = path.lower()
        kind = ("terraform" if lower.endswith((".tf", ".tfvars")) else
                "yaml" if lower.endswith((".yaml", ".yml")) else
                "json" if lower.endswith(".json") else None)
        if kind is None:
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        total += len(data)
        text = data.decode("utf-8-sig", "replace")
        t = time.perf_counter()
        try:
            if kind == "terraform":
                hcl2.parses_to_tree(text)
            elif kind == "yaml":
                for _ in yaml.compose_all(text, Loader=loader):
                    pass
            else:
                json.loads(text)
        except Exception:
            errors += 1
        seconds[kind] += time.perf_counter() - t
        counts[kind] += 1
    print(json.dumps({"files": sum(counts.values()), "bytes": total, "errors": errors, "import_s": round(t_import, 3),
                      "seconds": {k: round(v, 3) for k, v in seconds.items()}, "counts": counts,
                      "total_s": round(time.perf_counter() - t0, 3)}))


if __name__ == "__main__":
    main()
