"""The hostile-input oracle and generators, shared by the fast profile
(tests/hostile/test_fuzz.py, run by pytest) and the long one (bench/fuzz.py).

One check: lint a tree in-process exactly as the CLI does (discover, parse,
model, link, rules, secret redaction, suppressions), render every output
format, and collect what went wrong. A run is clean when

- nothing raised out of ``lint()`` or a reporter,
- no rule failed (the engine's last-resort net, ``LintResult.rule_failures``),
- no finding says "internal error" (the model builder's last-resort net),
- the JSON and SARIF outputs parse, and SARIF has the same results,
- every path in the output is relative to the scanned root, without ``..``,
- the exit code the CLI would give is 0 or 1,
- the run finished within ``time_limit`` seconds.

Those nets exist so that one bad document never costs a user the rest of the
run; a test that lands in them has still found a defect.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from mlcost_lint.config import Settings
from mlcost_lint.pipeline import LintOptions, LintResult, lint

FORMATS = ("text", "full", "json", "sarif", "github")
_RANK = {"error": 3, "warning": 2, "note": 1}


class TimeLimit(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """SIGALRM-based bound (main thread only; pytest and bench/fuzz.py run there)."""
    if seconds <= 0:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise TimeLimit(f"over {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def chdir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def lint_tree(root: Path, settings: Settings | None = None, *, jobs: int = 1,
              cache_dir: Path | None = None, paths: list[str] | None = None,
              stdin: bytes | None = None, reuse_run: bool = False) -> LintResult:
    """``mlcost-lint .`` run in-process from ``root`` (paths relative to it);
    ``reuse_run``: with the run cache, as the CLI runs without -v/--fix."""
    settings = settings or Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    with chdir(root):
        return lint(paths or ["."], settings, LintOptions(
            jobs=jobs, use_cache=cache_dir is not None, cache_dir=cache_dir, stdin=stdin, reuse_run=reuse_run))


def render(result: LintResult, settings: Settings, fmt: str, root: Path) -> str:
    """What the CLI prints for ``--format fmt`` (cwd = root, as the CLI's)."""
    from mlcost_lint.engine import selected_rules
    from mlcost_lint.report import ReportInput, renderer

    files = sum(1 for pf in result.files if pf.path and not pf.skipped_reason)
    data = ReportInput(findings=result.findings, rules=selected_rules(settings), files_scanned=files,
                       secrets=result.secrets)
    with chdir(root):
        return renderer(fmt)(data)


def exit_code(result: LintResult, fail_on: str = "warning") -> int:
    threshold = _RANK[fail_on]
    return 1 if any(_RANK[f.level.value] >= threshold for f in result.findings) else 0


def internal_errors(result: LintResult) -> list[str]:
    """The last-resort nets that caught something: each one is a defect."""
    out = [f"rule {f.code} raised: {f.error}" for f in result.rule_failures]
    out += [f"{f.code} {f.location}: {f.message}" for f in [*result.findings, *result.suppressed]
            if "internal error" in f.message]
    return out


def _bad_path(path: str) -> bool:
    return (path.startswith("/") or path.startswith("../") or "/../" in path or path == ".."
            or "\\" in path or (len(path) > 1 and path[1] == ":"))


def output_problems(outputs: dict[str, str], n_findings: int) -> list[str]:
    problems = []
    try:
        doc = json.loads(outputs["json"])
        if len(doc["findings"]) != n_findings:
            problems.append(f"json has {len(doc['findings'])} findings, expected {n_findings}")
        for item in doc["findings"]:
            if _bad_path(item["path"]):
                problems.append(f"json path escapes the root: {item['path']!r}")
    except (ValueError, KeyError, TypeError) as exc:
        problems.append(f"json output does not parse: {exc}")
    try:
        log = json.loads(outputs["sarif"])
        results = log["runs"][0]["results"]
        if len(results) != n_findings:
            problems.append(f"sarif has {len(results)} results, expected {n_findings}")
        for res in results:
            for loc in res["locations"] + res.get("relatedLocations", []):
                uri = loc["physicalLocation"]["artifactLocation"]["uri"]
                if _bad_path(uri) or "://" in uri:
                    problems.append(f"sarif uri escapes %SRCROOT%: {uri!r}")
                region = loc["physicalLocation"].get("region", {})
                if region.get("startLine", 1) < 1 or region.get("startColumn", 1) < 1:
                    problems.append(f"sarif region not 1-based: {region}")
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        problems.append(f"sarif output does not parse: {exc}")
    github = outputs["github"]
    if github:
        # One annotation per finding up to GitHub's per-level limit, then one
        # plain line saying how many more; any other line is an unescaped newline.
        from collections import Counter

        from mlcost_lint.report.github import PER_LEVEL

        try:
            levels = Counter(item["level"] for item in json.loads(outputs["json"])["findings"])
        except (ValueError, KeyError, TypeError):
            levels = Counter()
        lines = [ln for ln in github.splitlines() if ln]
        shown = sum(min(n, PER_LEVEL) for n in levels.values())
        annotations = [ln for ln in lines if ln.startswith("::")]
        extra = [ln for ln in lines if not ln.startswith("::")]
        if len(annotations) != shown or len(extra) != (1 if shown < n_findings else 0) \
                or any(not ln.startswith("mlcost-lint: ") for ln in extra):
            problems.append("github annotations: not one line per finding (a newline was not escaped)")
    return problems


@dataclass(slots=True)
class Outcome:
    findings: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    exit_code: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_tree(root: Path, settings: Settings | None = None, *, time_limit_s: float = 30.0,
               formats: tuple[str, ...] = FORMATS, jobs: int = 1) -> Outcome:
    """Lint ``root`` and render every format; never raises (failures are
    ``Outcome.problems``)."""
    settings = settings or Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    outcome = Outcome()
    start = time.monotonic()
    try:
        with time_limit(time_limit_s):
            result = lint_tree(root, settings, jobs=jobs)
            outputs = {fmt: render(result, settings, fmt, root) for fmt in formats}
    except TimeLimit as exc:
        outcome.problems.append(f"hang: {exc}")
        return outcome
    except BaseException as exc:  # noqa: BLE001 - a crash is what we look for
        if isinstance(exc, KeyboardInterrupt):
            raise
        outcome.problems.append("crash: " + "".join(traceback.format_exception(exc)).strip())
        return outcome
    finally:
        outcome.seconds = time.monotonic() - start
    outcome.findings = len(result.findings)
    for f in result.findings:
        outcome.codes[f.code] = outcome.codes.get(f.code, 0) + 1
    outcome.exit_code = exit_code(result)
    if outcome.exit_code not in (0, 1):
        outcome.problems.append(f"exit code {outcome.exit_code}")
    outcome.problems += internal_errors(result)
    if {"json", "sarif", "github"} <= set(formats):
        outcome.problems += output_problems(outputs, len(result.findings))
    return outcome


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


# ---------------------------------------------------------------- seeds ---

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
CORPUS = REPO.parent / "shared" / "corpus"
OUR_SUFFIXES = (".tf", ".tf.json", ".tfvars", ".tfvars.json", ".yaml", ".yml", ".json")
_SKIP_PARTS = {".mlcost_lint_cache", ".git", ".hypothesis"}


def seed_files(*roots: Path, limit_bytes: int = 200_000) -> list[Path]:
    """Every file of ours under the roots (sorted, so seeds are stable)."""
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if (path.is_file() and not path.is_symlink() and path.name.lower().endswith(OUR_SUFFIXES)
                    and not _SKIP_PARTS.intersection(path.parts) and path.stat().st_size <= limit_bytes):
                out.append(path)
    return out


def truncations(data: bytes, max_cuts: int | None = None, rng: random.Random | None = None) -> list[bytes]:
    """The file cut after every line (or ``max_cuts`` of them, spread out),
    plus cuts in the middle of a line."""
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    cuts = sorted(set(ends[:-1]))
    if max_cuts is not None and len(cuts) > max_cuts:
        step = len(cuts) / max_cuts
        cuts = [cuts[int(i * step)] for i in range(max_cuts)]
    out = [data[:c] for c in cuts]
    rng = rng or random.Random(0)
    for c in cuts[: max(1, len(cuts) // 4)]:
        out.append(data[: max(0, c - 1 - rng.randrange(0, 8))])
    return out


# ---------------------------------------------------------- mutations ---

_INTERESTING = [
    b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\t", b"\r", b"\r\n", b"\x85", b"\xe2\x80\xa8", b"\xc3", b"\xed\xa0\x80",
    b"{", b"}", b"[", b"]", b"(", b")", b'"', b"'", b"`", b"\\", b"${", b"%{", b"{{", b"}}", b"<<EOT\n", b"EOT\n",
    b"&a ", b"*a", b"<<: *a", b"!!python/object:os.system ", b"!Ref ", b"!!binary ", b"? ", b"- ", b": ", b"---\n",
    b"...\n", b"#", b"# mlcost-lint: ignore[MLC", b"# mlcost-lint: ignore-file\n", b"null", b"~", b".nan", b"-.inf",
    b"1e400", b"99999999999999999999999999999999", b"-1", b"0", b"0x1F", b"0o17", b"true", b"yes", b"NaN",
    b"Infinity", b"[]", b"{}", b'""', b"\xf0\x9f\x92\xa9", b"\xe2\x80\xae", b"a" * 300, b"\n" * 5,
]


def mutate(data: bytes, rng: random.Random, rounds: int = 3) -> bytes:
    """Byte-level mutation, biased towards structure characters and YAML/HCL
    tokens (a purely random byte mostly makes the file undecodable)."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, rounds)):
        op = rng.randrange(9)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:                                  # flip a byte
            buf[min(pos, len(buf) - 1)] = rng.randrange(256)
        elif op == 1:                                        # insert a token
            buf[pos:pos] = rng.choice(_INTERESTING)
        elif op == 2 and buf:                                # delete a run
            del buf[pos: pos + rng.randint(1, 40)]
        elif op == 3 and buf:                                # duplicate a run (duplicate keys, blocks)
            end = min(len(buf), pos + rng.randint(1, 400))
            buf[end:end] = buf[pos:end]
        elif op == 4:                                        # swap two lines
            lines = bytes(buf).split(b"\n")
            if len(lines) > 2:
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
                buf = bytearray(b"\n".join(lines))
        elif op == 5:                                        # change indentation of a line
            lines = bytes(buf).split(b"\n")
            i = rng.randrange(len(lines))
            lines[i] = rng.choice([b"", b" ", b"  ", b"\t", b"      "]) + lines[i].lstrip()
            buf = bytearray(b"\n".join(lines))
        elif op == 6:                                        # replace a scalar after ': ' or '= '
            text = bytes(buf)
            marks = [i for i in range(len(text) - 1) if text[i:i + 2] in (b": ", b"= ")]
            if marks:
                i = rng.choice(marks) + 2
                j = text.find(b"\n", i)
                j = len(text) if j < 0 else j
                buf[i:j] = rng.choice(_INTERESTING[30:] + [b"[1, 2]", b"{a: 1}", b"[[[[", b'"x"'])
        elif op == 7:                                        # truncate
            del buf[pos:]
        else:                                                # a random byte string
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(buf)


# ------------------------------------------------- structured generators ---
# Seeds are the realistic fixtures (every positive case carries the values a
# rule reads); a generated case is a seed with some of its values replaced by
# wrong shapes, so the junk lands exactly where rules look.

def _load_docs(path: Path) -> list[Any]:
    from mlcost_lint.parse import parse_bytes
    from mlcost_lint.discover import kind_of

    kind = kind_of(path.name)
    if kind is None:
        return []
    pf = parse_bytes(path.read_bytes(), path.name, kind)
    return [d.data for d in pf.documents if isinstance(d.data, (dict, list))]


def _is_k8s(data: Any) -> bool:
    return isinstance(data, dict) and "apiVersion" in data and "kind" in data


_SEED_CACHE: dict[str, list[Any]] = {}


def seed_documents(which: str) -> list[Any]:
    """'kubernetes' or 'training': parsed documents from the fixtures."""
    if not _SEED_CACHE:
        k8s: list[Any] = []
        training: list[Any] = []
        for path in seed_files(FIXTURES):
            if path.name.endswith((".tf.json", ".tfvars.json")):
                continue
            for data in _load_docs(path):
                (k8s if _is_k8s(data) else training).append(data)
        _SEED_CACHE["kubernetes"] = k8s
        _SEED_CACHE["training"] = training
    return _SEED_CACHE[which]


def key_paths(data: Any, prefix: tuple = (), limit: int = 4000) -> list[tuple]:
    out: list[tuple] = []
    stack = [(prefix, data)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                out.append(path + (k,))
                stack.append((path + (k,), v))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                out.append(path + (i,))
                stack.append((path + (i,), v))
    return sorted(out, key=repr)


def _set(data: Any, path: tuple, value: Any, delete: bool = False) -> Any:
    import copy

    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


def deep(levels: int, leaf: Any = 1, as_list: bool = False) -> Any:
    node = leaf
    for _ in range(levels):
        node = [node] if as_list else {"a": node}
    return node


SECRET_VALUE = "hunter2-s3cr3t-T0KEN-value"

# Values that are wrong for (almost) every field a rule reads.
JUNK_SCALARS: list[Any] = [
    None, True, False, 0, -1, 1, 2**63, -(2**63), 10**40, 1.5, -0.0, 1e308, float("nan"), float("inf"),
    float("-inf"), "", " ", "0", "-1", "NaN", "inf", "1e400", "8", "8Gi", "nvidia.com/gpu", "auto", "none",
    "${var.x}", "${{ x }}", "{{ .Values.x }}", "$(POD_NAME)", "${oc.env:HOME}", "???", "s3://", "gs://b/../..",
    "a" * 5000, "\x00", "\u202e", "é", "\ud7ff", "\n\n", "::error::x", "%0A", "\u2028", SECRET_VALUE,
]


def junk_values():
    from hypothesis import strategies as st

    scalars = st.one_of(st.sampled_from(JUNK_SCALARS), st.integers(), st.floats(), st.text(max_size=20))
    return st.one_of(
        scalars,
        st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=3),
                                                  st.dictionaries(st.text(max_size=8), c, max_size=3)),
                     max_leaves=8),
        st.builds(lambda n, lst: deep(n, as_list=lst), st.integers(1, 60), st.booleans()),
    )


def mutated_document(which: str):
    """A seed document with 1-6 of its values replaced by junk, keys deleted,
    or subtrees wrapped in a list; or a document that is all junk."""
    from hypothesis import strategies as st

    @st.composite
    def build(draw: Any) -> Any:
        seeds = seed_documents(which)
        data = draw(st.sampled_from(seeds))
        for _ in range(draw(st.integers(1, 6))):
            paths = key_paths(data)
            if not paths:
                break
            path = draw(st.sampled_from(paths))
            op = draw(st.sampled_from(["junk", "junk", "junk", "delete", "wrap", "secret"]))
            node = data
            for key in path[:-1]:
                node = node[key]
            if op == "delete":
                data = _set(data, path, None, delete=True)
            elif op == "wrap":
                data = _set(data, path, [node[path[-1]]])
            elif op == "secret" and isinstance(path[-1], str):
                data = _set(data, path, SECRET_VALUE)
            else:
                data = _set(data, path, draw(junk_values()))
        return data

    return st.one_of(build(), junk_values())


def dump_document(data: Any, as_json: bool) -> bytes:
    """YAML via PyYAML's safe dumper (never a Python tag), or JSON (with
    NaN written out, which our JSON reader refuses: a finding)."""
    import yaml

    if as_json:
        return json.dumps(data, allow_nan=True, default=str).encode()
    try:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode("utf-8", "surrogatepass")
    except (yaml.YAMLError, RecursionError):
        return json.dumps(data, default=str).encode()


# Terraform: resources of the types rules read, attributes and blocks as in
# the fixtures, values mixing literals, references, functions and junk.

def _tf_vocabulary() -> tuple[list[str], list[str], list[str]]:
    import re

    types: set[str] = set()
    attrs: set[str] = set()
    blocks: set[str] = set()
    for path in seed_files(FIXTURES):
        if not path.name.endswith((".tf", ".tfvars")):
            continue
        text = path.read_text("utf-8", "replace")
        types.update(re.findall(r'^resource\s+"([a-z0-9_]+)"', text, re.M))
        attrs.update(re.findall(r"^\s+([a-z_][a-z0-9_]*)\s*=", text, re.M))
        blocks.update(re.findall(r"^\s+([a-z_][a-z0-9_]*)\s*\{", text, re.M))
    return sorted(types), sorted(attrs), sorted(blocks)


_TF_VOCAB: list[Any] = []


def tf_vocabulary() -> tuple[list[str], list[str], list[str]]:
    if not _TF_VOCAB:
        _TF_VOCAB.append(_tf_vocabulary())
    return _TF_VOCAB[0]


def _hcl_string(text: str) -> str:
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + out.replace("\t", "\\t") + '"'


_TF_RAW_EXPRESSIONS = [
    "var.x", "var.gpu", "local.tags", "local.a", "null", "true", "[]", "{}", "1e400", "-1", "99999999999999999999999",
    "merge(local.tags, { team = \"ml\" })", "lookup(var.m, \"k\", null)", "try(var.q.r, 3)", "concat([1], var.l)",
    "format(\"%s-%d\", var.x, 3)", "[for i in range(10) : i]", "{ for k, v in var.m : k => v }", "var.x ? 1 : 0",
    "count.index", "each.value", "aws_s3_bucket.b.id", "module.m.out", "data.x.y.z", "tomap({ a = 1 })",
    "coalesce(null, \"p4d.24xlarge\")", "length(var.l) > 0 ? var.l[0] : null", "\"${var.x}-gpu\"",
    "\"%{ for x in var.l }${x}%{ endfor }\"", "range(100000)", "jsonencode(local.tags)", "file(\"/etc/passwd\")",
    "templatefile(\"x.tpl\", {})", "pathexpand(\"~\")", "abs(-1)", "upper(var.x)", "-(var.x)", "!var.x",
    "var.l[*].id", "tonumber(\"1e400\")", "sum([1, 2])",
]


def terraform_module():
    """(files) a small module: variables, locals, resources, a module call;
    rendered as .tf (HCL text) or .tf.json."""
    from hypothesis import strategies as st

    types, attrs, blocks = tf_vocabulary()

    scalar = st.one_of(st.sampled_from(JUNK_SCALARS), st.integers(), st.text(max_size=12),
                       st.sampled_from(["p4d.24xlarge", "g5.xlarge", "a2-highgpu-8g", "Standard_ND96asr_v4",
                                        "us-east-1", "SPOT", "ON_DEMAND", "ml", "team", "nvidia-tesla-a100"]))
    value = st.recursive(
        st.one_of(scalar.map(lambda v: ("lit", v)), st.sampled_from(_TF_RAW_EXPRESSIONS).map(lambda e: ("raw", e))),
        lambda c: st.one_of(st.lists(c, max_size=3).map(lambda v: ("list", v)),
                            st.dictionaries(st.sampled_from(attrs + ["team", "cost-center", "password", "token"]),
                                            c, max_size=3).map(lambda v: ("map", v))),
        max_leaves=10)
    body = st.recursive(
        st.dictionaries(st.sampled_from(attrs), value, max_size=6).map(lambda d: {k: ("attr", v) for k, v in d.items()}),
        lambda c: st.tuples(st.dictionaries(st.sampled_from(attrs), value, max_size=4),
                            st.lists(st.tuples(st.sampled_from(blocks), c), max_size=3)).map(
            lambda t: {**{k: ("attr", v) for k, v in t[0].items()},
                       **{f"{name}#{i}": ("block", b) for i, (name, b) in enumerate(t[1])}}),
        max_leaves=6)
    resource = st.tuples(st.sampled_from(types), st.sampled_from(["a", "b", "gpu", "ckpt", "x" * 70]), body)
    module = st.fixed_dictionaries({
        "variables": st.dictionaries(st.sampled_from(["x", "gpu", "m", "l", "q", "enable"]), value, max_size=4),
        "locals": st.dictionaries(st.sampled_from(["tags", "a", "b", "c"]), value, max_size=4),
        "resources": st.lists(resource, min_size=1, max_size=5),
        "as_json": st.booleans(),
        "tfvars": st.dictionaries(st.sampled_from(["x", "gpu", "m", "l", "q"]), value, max_size=3),
    })
    return module.map(render_terraform)


def _hcl_value(v: tuple) -> str:
    kind, x = v
    if kind == "raw":
        return x
    if kind == "list":
        return "[" + ", ".join(_hcl_value(i) for i in x) + "]"
    if kind == "map":
        return "{ " + ", ".join(f"{_hcl_string(str(k))} = {_hcl_value(i)}" for k, i in x.items()) + " }"
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return repr(x) if x == x and x not in (float("inf"), float("-inf")) else "null"
    return _hcl_string(str(x))


def _hcl_body(body: dict, indent: str) -> list[str]:
    lines = []
    for key, (kind, v) in body.items():
        name = key.split("#")[0]
        if kind == "attr":
            lines.append(f"{indent}{name} = {_hcl_value(v)}")
        else:
            lines.append(f"{indent}{name} {{")
            lines += _hcl_body(v, indent + "  ")
            lines.append(f"{indent}}}")
    return lines


def _json_value(v: tuple) -> Any:
    kind, x = v
    if kind == "raw":
        return "${" + x + "}"
    if kind == "list":
        return [_json_value(i) for i in x]
    if kind == "map":
        return {str(k): _json_value(i) for k, i in x.items()}
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    return x


def _json_body(body: dict) -> dict:
    out: dict[str, Any] = {}
    blocks: set[str] = set()
    for key, (kind, v) in body.items():
        name = key.split("#")[0]
        # JSON holds one value per name: an attribute and a block of the same
        # name (native syntax allows both) keep the first one drawn
        if kind == "attr":
            if name not in out:
                out[name] = _json_value(v)
        elif name in blocks or name not in out:
            blocks.add(name)
            out.setdefault(name, []).append(_json_body(v))
    return out


def render_terraform(m: dict) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    if m["as_json"]:
        doc: dict[str, Any] = {
            "variable": {k: {"default": _json_value(v)} for k, v in m["variables"].items()},
            "locals": {k: _json_value(v) for k, v in m["locals"].items()},
            "resource": {},
        }
        for rtype, name, body in m["resources"]:
            doc["resource"].setdefault(rtype, {})[name] = _json_body(body)
        files["main.tf.json"] = json.dumps(doc, default=str).encode()
    else:
        lines = []
        for k, v in m["variables"].items():
            lines += [f'variable "{k}" {{', f"  default = {_hcl_value(v)}", "}"]
        if m["locals"]:
            lines.append("locals {")
            lines += [f"  {k} = {_hcl_value(v)}" for k, v in m["locals"].items()]
            lines.append("}")
        for rtype, name, body in m["resources"]:
            lines.append(f'resource "{rtype}" "{name}" {{')
            lines += _hcl_body(body, "  ")
            lines.append("}")
        files["main.tf"] = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    if m["tfvars"]:
        files["terraform.tfvars"] = ("\n".join(f"{k} = {_hcl_value(v)}" for k, v in m["tfvars"].items())
                                     + "\n").encode("utf-8", "surrogatepass")
    return files
