"""YAML/JSON parsing: values, positions, multi-documents, and refusals."""

from __future__ import annotations

import time

import pytest
import yaml

from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind
from mlcost_lint.parse.yamljson import DocumentError, parse_json, parse_yaml

MANIFEST = """\
# a comment
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
        - name: c
          resources:
            limits: {nvidia.com/gpu: 4}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
"""


def test_positions_point_at_keys_and_items():
    docs = parse_yaml(MANIFEST, "job.yaml")
    assert [d.index for d in docs] == [0, 1]
    job = docs[0]
    assert job.data["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 4
    assert job.position(("kind",)) == (3, 1)
    assert job.position(("spec", "template", "spec", "containers", 0)) == (10, 11)
    gpu = ("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    assert job.position(gpu) == (12, 22)
    assert job.location(gpu + ("missing",)).line == 12  # nearest located ancestor
    assert docs[1].start_line == 14
    assert docs[1].position(("metadata", "name")) == (16, 12)


def test_anchors_and_merge_keys():
    doc = parse_yaml("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n", "a.yaml")[0]
    assert doc.data["m"] == {"y": 3, "x": 1}


def test_scalars_follow_yaml_rules_without_constructing_objects():
    doc = parse_yaml("a: yes\nb: 0x10\nc: 1e3\nd: 2024-01-01\ne: .nan\nf: null\ng: !Ref x\n", "s.yaml")[0]
    assert doc.data == {"a": True, "b": 16, "c": "1e3", "d": "2024-01-01", "e": ".nan", "f": None, "g": "x"}


def test_scalars_repeated_across_documents_and_files_keep_their_own_types():
    # Tags are remembered per scalar text and style (yamljson._Loader.resolve):
    # a quoted "1" stays a string after a plain 1, and the other way round.
    text = "a: 1\nb: '1'\nc: true\nd: \"true\"\ne: ~\nf: '~'\ng: 1\nh: yes\n"
    want = {"a": 1, "b": "1", "c": True, "d": "true", "e": None, "f": "~", "g": 1, "h": True}
    for path in ("one.yaml", "two.yaml"):
        assert parse_yaml(text, path)[0].data == want
        assert parse_yaml(text.replace("'1'", "1").replace("a: 1", "a: '1'"), path)[0].data == \
            {**want, "a": "1", "b": 1}
    # a long plain scalar is resolved each time (not remembered), with the same answer
    long_number = "1" * 80
    assert parse_yaml(f"n: {long_number}\nq: '{long_number}'\n", "long.yaml")[0].data == \
        {"n": int(long_number), "q": long_number}


def test_alias_bomb_is_refused_quickly():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    start = time.perf_counter()
    with pytest.raises(DocumentError, match="expands to more than"):
        parse_yaml("\n".join(lines) + "\n", "bomb.yaml")
    assert time.perf_counter() - start < 2.0


def test_python_tags_are_refused():
    with pytest.raises(DocumentError, match="unsafe YAML tag '!!python/object/apply:os.system'"):
        parse_yaml("x: !!python/object/apply:os.system ['echo hi']\n", "evil.yaml")


def test_nesting_limit():
    deep = "a: " + "[" * 50 + "]" * 50 + "\n"
    with pytest.raises(DocumentError, match="nesting deeper than 20 levels"):
        parse_yaml(deep, "deep.yaml", max_depth=20)


def _outcome(text: str, **bounds):
    try:
        return [(d.data, d.positions, d.blocks, d.start_line, d.end_line) for d in parse_yaml(text, "t.yaml", **bounds)]
    except DocumentError as exc:
        return ("error", exc.message, exc.line, exc.column)


_WALKED_FIRST = [
    "a: " + "[" * 30 + "]" * 30 + "\nb: " + "[" * 40 + "]" * 40 + "\n",     # two branches too deep: the walk names the last
    "x: !!python/object/apply:os.system [1]\ny: " + "{a: " * 30 + "1" + "}" * 30 + "\n",
    "x: " + "[" * 30 + "!!python/name:os.system ''" + "]" * 30 + "\n",
    "a: 1\n---\nb: " + "[" * 25 + "]" * 25 + "\n",
    "k: |\n  line\nl: [1, 2, {m: yes}]\n",
]


@pytest.mark.parametrize("text", _WALKED_FIRST)
def test_documents_without_aliases_read_as_with_the_size_walk(text: str, monkeypatch):
    """A text with no alias skips the size walk unless converting fails;
    then the walk runs and its error wins, as when it ran first (depth
    errors from the walk name the last too-deep branch)."""
    import mlcost_lint.parse.yamljson as yamljson

    fast = _outcome(text, max_depth=20)
    walked = []
    real = yamljson._Converter.convert
    monkeypatch.setattr(yamljson._Converter, "convert", lambda self, node, alias_free=False: (
        walked.append(alias_free), real(self, node, False))[1])
    assert _outcome(text, max_depth=20) == fast
    assert walked and all(walked)     # parse_yaml asked for the fast path; the walk ran anyway


def test_documents_without_aliases_match_the_size_walk_on_real_files(monkeypatch):
    from pathlib import Path

    import mlcost_lint.parse.yamljson as yamljson

    shared = Path(__file__).resolve().parents[2] / "shared"
    files = sorted(p for d in ("corpus", "corpus-v2") if (shared / d).is_dir()
                   for p in (shared / d).rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not files:
        pytest.skip("../shared/corpus and corpus-v2 not beside this clone")
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    fast = [_outcome(t) for t in texts]
    real = yamljson._Converter.convert
    monkeypatch.setattr(yamljson._Converter, "convert", lambda self, node, alias_free=False: real(self, node, False))
    assert [_outcome(t) for t in texts] == fast
    assert sum("*" not in t or "&" not in t for t in texts) > 1000
    assert sum("*" in t and "&" not in t for t in texts) > 100      # globs, shell: alias-free too


@pytest.mark.parametrize("text, alias_free", [
    ("files: ['*.json', 'data/**']\nrun: train\n", True),      # a "*" alone: no alias
    ("run: a && b\nskip: '*'\n", False),                         # both: the general way
    ("base: &b {x: 1}\nother: *b\n", False),
    ("note: '&'\n", True),
])
def test_only_a_text_with_an_anchor_and_an_alias_sign_takes_the_general_way(text, alias_free, monkeypatch):
    # An alias names an anchor (one that names none is the composer's error),
    # so a text needs both signs to hold one.
    import mlcost_lint.parse.yamljson as yamljson

    asked = []
    real = yamljson._Converter.convert
    monkeypatch.setattr(yamljson._Converter, "convert", lambda self, node, alias_free=False: (
        asked.append(alias_free), real(self, node, alias_free))[1])
    docs = parse_yaml(text, "f.yaml")
    assert asked == [alias_free]
    assert docs[0].data == yaml.safe_load(text)
    with pytest.raises(DocumentError, match="undefined alias"):     # "*" alone
        parse_yaml("a: *nowhere\n", "f.yaml")


def test_syntax_error_has_parser_position():
    with pytest.raises(DocumentError) as err:
        parse_yaml("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n", "bad.yaml")
    assert err.value.line == 5 and err.value.message.startswith("YAML syntax error")


def test_json_values_exact_and_positions():
    doc = parse_json('{\n  "zero_optimization": {"stage": 3},\n  "lr": 1e-5\n}\n', "ds.json")
    assert doc.data == {"zero_optimization": {"stage": 3}, "lr": 1e-05}
    assert doc.position(("zero_optimization", "stage")) == (2, 25)
    assert doc.position(("lr",)) == (3, 3)


def test_json_errors_and_constants():
    with pytest.raises(DocumentError) as err:
        parse_json('{\n  "a": 1,\n}\n', "bad.json")
    assert (err.value.line, err.value.column) == (3, 1)
    with pytest.raises(DocumentError, match="NaN is not valid JSON"):
        parse_json('{"a": NaN}', "nan.json")


def test_parse_bytes_reports_only_files_that_are_ours():
    bad_k8s = parse_bytes(b"apiVersion: v1\nkind: Pod\nspec: [\n", "pod.yaml", FileKind.YAML)
    assert [(e.line, e.message.split(":")[0]) for e in bad_k8s.errors] == [(4, "YAML syntax error")]
    unrelated = parse_bytes(b"foo: [\n", "other.yaml", FileKind.YAML)
    assert unrelated.errors == [] and unrelated.skipped_reason
    helm = parse_bytes(b"{{- if .Values.enabled }}\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\n  labels: {{ toYaml .Values.labels }}\n{{- end }}\n", "t.yaml", FileKind.YAML)
    assert helm.errors == [] and "template" in helm.skipped_reason


def test_encodings():
    bom = parse_bytes("\ufeffapiVersion: v1\nkind: Pod\n".encode(), "bom.yaml", FileKind.YAML)
    assert bom.documents[0].data["kind"] == "Pod"
    latin = parse_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n", "l.yaml", FileKind.YAML)
    assert [(e.line, e.message) for e in latin.errors] == [(3, "cannot read file: not valid UTF-8 at byte 45")]
    binary = parse_bytes(b"\x00\x01\x02", "x.tf", FileKind.TERRAFORM)
    assert binary.errors[0].message == "cannot read file: binary content (NUL byte at offset 0)"


def test_suppressions_are_read_at_parse_time():
    pf = parse_bytes(b"# mlcost-lint: ignore-file[MLC3]\napiVersion: v1  # mlcost-lint: ignore[MLC102, mlc201] reason here\nkind: Pod\n",
                     "p.yaml", FileKind.YAML)
    assert [(s.line, s.column, s.codes, s.whole_file, s.comment_only_line, s.reason) for s in pf.suppressions] == [
        (1, 1, ("MLC3",), True, True, ""),
        (2, 17, ("MLC102", "MLC201"), False, False, "reason here"),
    ]
    assert pf.comment_lines == frozenset({1})


# Texts with no alias take a shorter conversion (_Converter._convert_once);
# a "*" and a "&" anywhere (here in a comment at the end of the first line)
# send the same text the general way.
_BOTH_WAYS = [
    MANIFEST,
    "a: &base {x: 1, y: [true, null, 2.5, '8', 0x1F]}\nb:\n  <<: {x: 2, z: 3}\n  x: 9\n",
    "run: |\n  python train.py\n  echo done\nsteps:\n  - |2\n     indented\n  - plain\n",
    "? [complex, key]\n: value\n1: one\ntrue: yes\n2024-01-01: date\n",
    "deep: {a: {b: {c: {d: 1}}}}\n",
    "x: !!python/object:os.system ls\n",
    "list: [!!python/name:os.system x]\n",
    "- - - - - 1\n",
]


@pytest.mark.parametrize("text", _BOTH_WAYS)
@pytest.mark.parametrize("depth", [500, 3])
def test_alias_free_conversion_equals_the_general_one(text, depth):
    def outcome(t):
        try:
            return [(d.data, d.positions, d.blocks, d.start_line, d.end_line)
                    for d in parse_yaml(t, "f.yaml", max_depth=depth)]
        except DocumentError as exc:
            return (exc.message, exc.line, exc.column)

    first, _, rest = text.partition("\n")
    general = f"{first} # * &\n{rest}"
    assert "*" not in text
    assert outcome(text) == outcome(general)
    assert outcome(text) != []      # each text reads to something or fails on something


def test_scalar_values_are_the_standard_tags_values_every_time():
    text = "a: [8, 8, true, true, null, 1.5, 017, 1_000, 0o17]\n"
    for _ in range(2):      # the second time from what the first remembered
        assert parse_yaml(text, "f.yaml")[0].data == {"a": [8, 8, True, True, None, 1.5, 15, 1000, "0o17"]}
