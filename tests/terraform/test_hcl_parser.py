import pickle

import pytest

from mlcost_lint.parse import hcl as H
from mlcost_lint.parse.hcl import HclSyntaxError, parse_expression, parse_hcl, parse_template


SAMPLE = '''resource "aws_instance" "gpu" {
  count = var.n
  tags  = { Name = "x-${count.index}", (local.k) = 1 }
  ids   = aws_instance.a[*].id
  first = var.list.0
  f     = merge(local.a, var.b...)
  c     = var.on ? "a" : "b"
  neg   = -3
  r     = [for k, v in var.m : upper(v) if k != "x"]
  o     = { for k, v in var.m : v => k... }
  h     = <<-EOT
    line ${var.x}
      indented
  EOT

  dynamic "ebs" {
    for_each = var.disks
    content {
      size = ebs.value
    }
  }
}
'''


def attr(body, name):
    return body.blocks[0].attributes[name]


def test_blocks_attributes_and_positions():
    body = parse_hcl(SAMPLE, "main.tf")
    blk = body.blocks[0]
    assert (blk.type, blk.labels, blk.line, blk.end_line, blk.column) == ("resource", ["aws_instance", "gpu"], 1, 22, 1)
    count = blk.attributes["count"]
    assert (count.line, count.column) == (2, 3)
    assert count.expr == H.Traversal("var", (H.GetAttr("n"),), 2, 11)
    dyn = blk.blocks[0]
    assert (dyn.type, dyn.labels, dyn.line) == ("dynamic", ["ebs"], 16)
    assert dyn.blocks[0].type == "content"
    assert dyn.blocks[0].attributes["size"].line == 19


def test_expression_nodes():
    body = parse_hcl(SAMPLE, "main.tf")
    tags = attr(body, "tags").expr
    assert isinstance(tags, H.ObjectExpr)
    assert tags.items[0].key == H.Literal("Name", 3, 13)
    tmpl = tags.items[0].value
    assert isinstance(tmpl, H.Template) and tmpl.parts[0] == "x-"
    assert isinstance(tags.items[1].key, H.Parenthesis)
    ids = attr(body, "ids").expr
    assert ids.root == "aws_instance"
    assert ids.steps[0] == H.GetAttr("a")
    assert isinstance(ids.steps[1], H.Splat) and ids.steps[1].steps == (H.GetAttr("id"),)
    assert attr(body, "first").expr.steps[1] == H.Index(H.Literal(0, 5, 20))
    call = attr(body, "f").expr
    assert (call.name, call.expand_final, len(call.args)) == ("merge", True, 2)
    assert isinstance(attr(body, "c").expr, H.Conditional)
    assert attr(body, "neg").expr == H.Literal(-3, 8, 11)
    fr = attr(body, "r").expr
    assert (fr.key_var, fr.value_var, fr.key, fr.grouping) == ("k", "v", None, False)
    assert isinstance(fr.cond, H.BinaryOp) and fr.cond.op == "!="
    fo = attr(body, "o").expr
    assert fo.grouping is True and fo.key is not None


def test_heredoc_split_into_text_and_interpolations():
    body = parse_hcl(SAMPLE, "main.tf")
    h = attr(body, "h").expr
    assert isinstance(h, H.Template) and h.heredoc
    assert h.parts[0] == "line "
    assert h.parts[1] == H.Traversal("var", (H.GetAttr("x"),), 12, 12)
    assert h.parts[2] == "\n  indented\n"


def test_plain_heredoc_keeps_text():
    body = parse_hcl('x = <<EOT\n  a $${b}\nEOT\n', "t.tf")
    assert body.attributes["x"].expr == H.Literal("  a ${b}\n", 1, 5)


def test_template_directives_nest():
    t = parse_template('%{ if var.on }yes%{ else }no%{ endif }-%{ for x in var.l ~} ${x} %{~ endfor }', 1, 1)
    assert isinstance(t, H.Template)
    cond, dash, loop = t.parts
    assert isinstance(cond, H.TemplateIf) and cond.then == ["yes"] and cond.otherwise == ["no"]
    assert dash == "-"
    assert isinstance(loop, H.TemplateFor) and loop.value_var == "x"
    assert loop.body == [H.Traversal("x", (), 1, 63)]


def test_escapes_in_quoted_strings():
    body = parse_hcl('a = "q\\"t\\n$${lit}"\n', "t.tf")
    assert body.attributes["a"].expr.value == 'q"t\n${lit}'


def test_parse_expression_positions():
    e = parse_expression("var.a + 1", 7, 10)
    assert isinstance(e, H.BinaryOp)
    assert (e.left.line, e.left.column) == (7, 10)


def test_tree_is_picklable():
    body = parse_hcl(SAMPLE, "main.tf")
    again = pickle.loads(pickle.dumps(body))
    assert again == body


@pytest.mark.parametrize("text, line, column, message", [
    ('resource "a" "b" {\n  x = 1 +\n}\n', 3, 1, "unexpected '}'"),
    ("a = 1\nb = \n", 2, 5, "unexpected newline"),
    ('resource "a" {', 1, 15, "unexpected end of file"),
    ('x = "%{ if a }"', 1, 6, "template directive is not closed"),
])
def test_syntax_errors_have_positions(text, line, column, message):
    with pytest.raises(HclSyntaxError) as info:
        parse_hcl(text, "bad.tf")
    assert (info.value.line, info.value.column, info.value.message) == (line, column, message)


def test_deep_nesting_is_a_syntax_error_not_a_crash():
    with pytest.raises(HclSyntaxError) as info:
        parse_hcl("x = " + "[" * 5000 + "]" * 5000, "deep.tf")
    assert info.value.message == "nesting too deep"


@pytest.mark.parametrize("text", ["\x00\x01", "}}}}", "x = ${", '"unterminated', "a = <<EOT\nno end"])
def test_garbage_only_raises_hcl_syntax_error(text):
    try:
        parse_hcl(text, "g.tf")
    except HclSyntaxError:
        pass
