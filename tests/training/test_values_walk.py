"""ConfigView.walk_strings: every string under the root, with its path, in
document order; a shared (anchored) node once."""

from __future__ import annotations

from mlcost_lint.model.training._values import ConfigView
from mlcost_lint.parse.yamljson import parse_yaml


def test_strings_come_in_document_order_with_their_paths():
    doc = parse_yaml("a: x\nb: [1, y, {c: z, d: [w]}]\ne: true\nf: {g: v}\nh: last\n", "c.yaml")[0]
    assert list(ConfigView(doc).walk_strings()) == [
        (("a",), "x"), (("b", 1), "y"), (("b", 2, "c"), "z"), (("b", 2, "d", 0), "w"), (("f", "g"), "v"),
        (("h",), "last")]
    assert list(ConfigView(doc, ("b",)).walk_strings()) == [((1,), "y"), ((2, "c"), "z"), ((2, "d", 0), "w")]
    assert list(ConfigView(doc, ("a",)).walk_strings()) == [((), "x")]
    assert list(ConfigView(doc, ("e",)).walk_strings()) == []


def test_a_node_shared_by_an_anchor_is_walked_once_where_it_first_appears():
    doc = parse_yaml("base: &b {path: s3://bucket/data}\nfirst: *b\nsecond: [*b, s]\n", "c.yaml")[0]
    assert list(ConfigView(doc).walk_strings()) == [(("base", "path"), "s3://bucket/data"), (("second", 1), "s")]
