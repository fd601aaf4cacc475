"""Attribute relations to input dims (``divides dim(X, i)``, ``== dim(X, i)``, ``dim(X, i) == size``):
their notation and its round trip, compile errors at their position, the docs' rendering, and
their check on nodes, which fires only on known dims."""
from __future__ import annotations

from pathlib import Path

import pytest

from opspec.cli import main
from opspec.codegen.constraints import constraint_problems
from opspec.codegen.notation import NotationError, parse_attribute
from opspec.runtime.constraints import attribute_violations
from opspec.runtime.contract.values import TensorType
from opspec.runtime.schema import (Attribute, AttrType, DimRelation, DimRelationKind, FormalParameter, OpSchema,
                                   ValueConstraint)
from opspec.runtime.shape import Sym

SHORT_FORMS = [
    'int divides dim(query, 2) if rank(query) == 3 as "the query\'s hidden size"',
    "int == dim(W, 0) or -1",
    "int >= 16 dim(B, 1) == ceil(K / block_size) dim(B, 2) == block_size * bits // 8 if rank(B) == 3",
    "int divides dim(X, -1) divides dim(Y, -1)",
    'int divides dim(query, 2) if present(key) as "hidden size"',
    "int dim(B, 0) == if(K % 2, K + 1, K) * max(N, 2) // 2 if rank(B) == 2",
]


@pytest.mark.parametrize("text", SHORT_FORMS)
def test_the_notation_reads_back_what_it_renders(text):
    constraint = parse_attribute(text).constraint
    assert constraint is not None and constraint.relations
    assert parse_attribute(f"int {constraint.describe()}").constraint == constraint


def test_each_form_says_what_it_means():
    divides = parse_attribute('int required divides dim(query, 2) if rank(query) == 3 as "hidden size"')
    assert divides.required and divides.constraint is not None
    assert divides.constraint.relations == (
        DimRelation(DimRelationKind.DIVIDES, "query", 2, rank=3, named="hidden size"),)
    equals = parse_attribute("int == dim(W, 0) or -1").constraint
    assert equals is not None and equals.relations == (DimRelation(DimRelationKind.EQUALS, "W", 0, unless=-1),)
    size = parse_attribute("int dim(B, 1) == ceil(K / block_size) = 32").constraint
    assert size is not None and size.relations == (
        DimRelation(DimRelationKind.SIZE, "B", 1, size="ceil(K / block_size)"),)
    chosen = parse_attribute("int dim(B, 0) == if(K, 1, -K) if rank(B) == 2").constraint
    assert chosen is not None and chosen.relations == (
        DimRelation(DimRelationKind.SIZE, "B", 0, rank=2, size="if(K, 1, -K)"),)


@pytest.mark.parametrize("text, offset, message", [
    ("int divides dim(X, a)", 19, "whole-number axis"),
    ("int divides X", 12, "expected 'dim'"),
    ("int divides dim(X, 1) if rank(Y) == 3", 22, "must be on 'X'"),
    ("int == dim(X, 1) as name", 20, "quoted name"),
    ("int == dim(X, 1) or many", 20, "whole number after 'or'"),
    ("int dim(B, 1) == ceil(K / )", 26, "unexpected ')'"),
    ("int dim(B, 1) == ", 17, "expected a size expression"),
    ("int dim(B, 1) == K / 2", 19, "only allowed inside ceil() or floor()"),
    ("int dim(B, 1) == K % ", 20, "ends where a value was expected"),
    ("int dim(B, 1) == 2 ** 3", 20, "unexpected '*'"),
    ("int dim(B, 1) == K block_size", 19, "unexpected 'block_size'"),
    ("int dim(B, 1) == ceil(K) + 1", 22, "expected a ratio `a / b`, found K"),
    ("int dim(B, 1) == 2 * numel(B)", 21, "numel() is not allowed here (allowed: ceil, floor, if, max, min)"),
    ("int dim(B, 1) == 2 * root(K)", 21, "unknown function 'root'"),
])
def test_a_broken_relation_is_an_error_at_its_character(text, offset, message):
    with pytest.raises(NotationError) as raised:
        parse_attribute(text)
    assert message in str(raised.value) and raised.value.offset == offset


def test_a_size_is_a_formula_over_the_nodes_int_attributes():
    size = _schema("dim(B, 0) == ceil(K / block) * (heads + 1) - K % 3 + min(K, 9) // 2")
    assert _problems(size, {"heads": 4, "block": 32, "K": 80}, None, (17,)) == []  # 3 * 5 - 2 + 4
    assert _problems(size, {"heads": 4, "block": 32, "K": 80}, None, (16,)) == [
        "B's axis 0 is 16, but ceil(K / block) * (heads + 1) - K % 3 + min(K, 9) // 2 is 17 "
        "(K = 80, block = 32, heads = 4)"]
    assert _problems(size, {"heads": 4, "block": 0, "K": 80}, None, (16,)) == []  # no division by zero
    assert _problems(size, {"heads": 4, "K": 80}, None, (16,)) == []  # block has no value at hand
    # checked only where every attribute it reads is a known number, even where the product would be 0
    assert _problems(_schema("dim(B, 0) == block * 0 + 1"), {"heads": 4}, None, (16,)) == []


def test_compile_checks_name_the_versions_inputs_and_int_attributes():
    constraint = parse_attribute("int divides dim(query, 3) if rank(query) == 3 dim(B, 0) == N * bits").constraint
    assert constraint is not None
    problems = constraint_problems(AttrType.INT, constraint, ["query", "A"], {"N": AttrType.INT, "bits": AttrType.FLOAT})
    assert problems == [
        "divides dim(query, 3) if rank(query) == 3: axis 3 is not an axis of a rank-3 input",
        "dim(B, 0) == N * bits: 'B' names no input of this version (inputs: A, query)",
        "dim(B, 0) == N * bits: attribute 'bits' is float, not an int",
    ]
    unknown = parse_attribute("int dim(A, 0) == (Q + 1) * max(N, 2)").constraint
    assert unknown is not None and constraint_problems(AttrType.INT, unknown, ["A"], {"N": AttrType.INT}) == [
        "dim(A, 0) == (Q + 1) * max(N, 2): unknown attribute 'Q'"]
    on_float = parse_attribute("float divides dim(A, 0)").constraint
    assert on_float is not None and constraint_problems(AttrType.FLOAT, on_float, ["A"], {}) == [
        "a relation to a dim (divides, ==, dim(...)) needs an int, not float"]


OP = """op: Foo
summary: A test op.
versions:
  1:
    inputs:
      X: T
    outputs:
      Y: T
    attributes:
      heads: {heads}
      K: int = 4
    types:
      T: [tensor(float)]
    inference: elementwise
"""


def _generate(tmp_path: Path, heads: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    files = {"opdefs/x.test/domain.yaml": "domain: x.test\nopset: {min: 1, max: 5}\n",
             "opdefs/x.test/f/Foo.yaml": OP.replace("{heads}", heads)}
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    code = main(["generate", "--opdefs", str(tmp_path / "opdefs"), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.err.splitlines()


def test_generate_locates_relation_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, lines = _generate(tmp_path, "int divides dim(Z, 0)", capsys)
    assert code == 1 and lines[0] == ("opdefs/x.test/f/Foo.yaml:10:14: error: attribute 'heads': divides dim(Z, 0): "
                                      "'Z' names no input of this version (inputs: X)")
    code, lines = _generate(tmp_path, "int dim(X, 0) == ceil(K / )", capsys)
    assert code == 1 and lines[0].startswith("opdefs/x.test/f/Foo.yaml:10:40: error: attribute 'heads': ")
    code, lines = _generate(tmp_path, "{type: int, relations: [{relation: size, input: X, axis: 0, size: 'K +'}]}",
                            capsys)
    assert code == 1 and lines[0].endswith("dim(X, 0) == K +: the formula ends where a value was expected")
    code, lines = _generate(tmp_path, "{type: int, relations: [{relation: size, input: X, axis: 0, size: 'dim(X, 1)'}]}",
                            capsys)
    assert code == 1 and lines[0].endswith("dim(X, 0) == dim(X, 1): dim() is not allowed here "
                                           "(allowed: ceil, floor, if, max, min)")
    code, _ = _generate(tmp_path, "{type: int, relations: [{relation: divides, input: X, axis: -1, rank: 2}]}", capsys)
    assert code == 0


def test_the_long_form_reads_as_the_short_one(tmp_path, capsys, monkeypatch):

    monkeypatch.chdir(tmp_path)
    code, _ = _generate(tmp_path, "{type: int, relations: [{relation: equals, input: X, axis: 0, unless: -1, "
                                  "named: rows}, {relation: size, input: X, axis: 1, size: 2 * K}]}", capsys)
    assert code == 0
    text = (tmp_path / "out" / "docs" / "x.test" / "Foo.md").read_text(encoding="utf-8")
    assert '`heads` | `int` |  | == dim(X, 0) or -1 as "rows" dim(X, 1) == 2 * K |' in text


def _schema(*relations: str) -> OpSchema:
    constraint = parse_attribute("int " + " ".join(relations)).constraint
    attributes = {"heads": Attribute("heads", AttrType.INT, constraint=constraint),
                  "K": Attribute("K", AttrType.INT, default=64), "block": Attribute("block", AttrType.INT)}
    inputs = tuple(FormalParameter(name, "T", frozenset({"tensor(float)"})) for name in ("X", "B"))
    return OpSchema(name="Foo", domain="x.test", since_version=1, inputs=inputs, outputs=(), attributes=attributes,
                    type_constraints=(), min_input=2, max_input=2, min_output=0, max_output=0)


def _problems(schema: OpSchema, attributes: dict, *shapes) -> list[str]:
    inputs = [None if shape is None else TensorType(1, shape) for shape in shapes]
    return [violation.problem for violation in attribute_violations(schema, attributes, inputs)]


def test_a_node_breaking_a_relation_is_told_how():
    divides = _schema('divides dim(X, 2) if rank(X) == 3 as "X\'s hidden size"')
    assert _problems(divides, {"heads": 4}, (2, 3, 66)) == ["X's hidden size (heads 4) 66 is not divisible by 4"]
    assert _problems(divides, {"heads": 4}, (2, 3, 64)) == []
    equals = _schema("== dim(B, 0) or -1")
    assert _problems(equals, {"heads": 5}, None, (4, 2)) == ["heads 5 does not match B's axis 0 4"]
    size = _schema("dim(B, -1) == ceil(K / block) * heads")
    assert _problems(size, {"heads": 2, "block": 32}, None, (8, 6)) == [
        "B's last axis is 6, but ceil(K / block) * heads is 4 (K = 64, block = 32, heads = 2)"]
    assert _problems(size, {"heads": 2, "block": 32, "K": 80}, None, (8, 6)) == []


def test_relations_stay_silent_where_the_dim_is_not_a_known_number():
    divides = _schema("divides dim(X, 2) if rank(X) == 3")
    equals = _schema("== dim(B, 0) or -1")
    size = _schema("dim(B, 1) == ceil(K / block)")
    n = Sym("N")
    for schema, attributes, shapes in (
            (divides, {"heads": 4}, [(2, 3, n)]),  # a symbol may be any multiple
            (divides, {"heads": 4}, [(2, 3, None)]),  # an unknown dim
            (divides, {"heads": 4}, [None]),  # an unknown shape
            (divides, {"heads": 4}, [(2, 66)]),  # another rank than the relation's
            (divides, {"heads": 4}, [(2, 3, 4, 66)]),
            (divides, {"heads": 0}, [(2, 3, 66)]),  # a head count that is refused for itself
            (equals, {"heads": -1}, [None, (4, 2)]),  # the value that says "not set"
            (equals, {"heads": 5}, [None, (n * 2, 2)]),
            (equals, {"heads": 5}, [None, ()]),  # a rank the op refuses is its rule's to report
            (equals, {}, [None, (4, 2)]),  # an attribute the node leaves out
            (size, {"heads": 1}, [None, (8, 6)]),  # block not given and without default
            (size, {"heads": 1, "block": 0}, [None, (8, 6)]),  # a division by zero
            (size, {"heads": 1, "block": 32}, [None, (8, n)]),
            (size, {"heads": 1, "block": 32}, [None, None])):
        assert _problems(schema, attributes, *shapes) == [], (schema.attributes["heads"], attributes, shapes)


def test_the_constraint_shows_on_the_op_page():
    root = Path(__file__).resolve().parents[1] / "generated" / "onnxruntime" / "docs" / "com.microsoft"
    page = (root / "WordConvEmbedding.md").read_text(encoding="utf-8")
    assert '| `embedding_size` | `int` |  | == dim(W, 0) or -1 as "W\'s filter count" |' in page
    assert ValueConstraint(relations=(DimRelation(DimRelationKind.DIVIDES, "X", -1),)).describe() == "divides dim(X, -1)"


def test_a_relation_may_hold_only_beside_another_input():
    beside = _schema("divides dim(X, -1) if present(B)")
    assert _problems(beside, {"heads": 4}, (2, 66), (2, 66)) == ["X's last axis (heads 4) 66 is not divisible by 4"]
    assert _problems(beside, {"heads": 4}, (2, 66), None) == []  # B left out, or of unknown type: it may be absent
    assert _problems(beside, {"heads": 4}, (2, 66)) == []
    constraint = parse_attribute("int divides dim(X, -1) if present(Z)").constraint
    assert constraint is not None and constraint.relations[0].present == "Z"
    assert constraint_problems(AttrType.INT, constraint, ["X"], {}) == [
        "divides dim(X, -1) if present(Z): present(Z) names no input of this version (inputs: X)"]


def test_group_query_attention_holds_the_query_split_only_beside_a_key():
    from opspec.runtime.defs import INFERENCE
    from opspec.runtime.testing import run_rule, t

    attributes = {"num_heads": 3, "kv_num_heads": 1}
    packed = [t(1, 3, 80), None, None, None, None, t(1, elem=6), t(elem=6)]  # (3 + 2 * 1) heads of 16
    unpacked = [t(1, 3, 80), t(1, 3, 16), t(1, 3, 16), *packed[3:]]
    schema = INFERENCE.get_schema("GroupQueryAttention", None, "com.microsoft")
    assert attribute_violations(schema, attributes, packed) == []
    assert run_rule("GroupQueryAttention", None, packed, attributes, domain="com.microsoft").output_type(0) == t(1, 3, 48)
    assert [violation.problem for violation in attribute_violations(schema, attributes, unpacked)] == [
        "the query's hidden size (num_heads 3) 80 is not divisible by 3"]


@pytest.mark.parametrize("op, attributes, shapes", [
    ("MultiHeadAttention", {"num_heads": 3}, [("B", "S", "Q"), ("B", "L", "Q"), ("B", "L", "V")]),
    ("MultiHeadAttention", {"num_heads": 3}, [("B", "S", 3, 3, 5), None, None]),  # packed: another rank
    ("RotaryEmbedding", {"num_heads": 4}, [("B", "S", "H")]),
    ("GroupQueryAttention", {"num_heads": 3, "kv_num_heads": 2}, [("B", "S", "Q"), ("B", "S", "K"), ("B", "S", "K")]),
    ("WordConvEmbedding", {"embedding_size": 5, "conv_window_size": 3, "char_embedding_size": 2},
     [("W", "C"), ("F", 1, "K", "E"), ("F",), ("N", "E")]),
])
def test_the_declared_relations_of_onnxruntime_ops_stay_silent_on_symbols(op, attributes, shapes):
    from opspec.runtime.defs import INFERENCE

    schema = INFERENCE.get_schema(op, None, "com.microsoft")
    inputs = [None if shape is None else TensorType(1, tuple(Sym(d) if isinstance(d, str) else d for d in shape))
              for shape in shapes]
    assert attribute_violations(schema, attributes, inputs) == []
