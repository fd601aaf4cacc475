"""Python literals of schema values: exact, safe against hostile text, names used where given."""
from __future__ import annotations

from types import MappingProxyType

import pytest

from opspec.codegen.pyliteral import LiteralWriter, docstring, py
from opspec.runtime import schema
from opspec.runtime.schema import Attribute, AttrType, FormalParameter, FormalParameterOption, ValueConstraint

HOSTILE = ["'", '"', "'''", '"""', "\\", "\\'", "')\nimport os\nos.system('x')\n('", "\x00\x1b\u2028", "{x}", "é ∑ 🙂"]
NAMESPACE = {name: getattr(schema, name) for name in dir(schema) if not name.startswith("__")}
NAMESPACE["MappingProxyType"] = MappingProxyType


def evaluated(text: str) -> object:
    return eval(text, dict(NAMESPACE))  # noqa: S307 - the text is what the generated module would hold


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_stays_inside_its_literal(text: str) -> None:
    param = FormalParameter(name=text, type_str=text, types=frozenset({text, "tensor(float)"}), description=text)
    attribute = Attribute(name=text, type=AttrType.STRING, description=text, default=text,
                          constraint=ValueConstraint(allowed=(text, "b")))
    value = (param, MappingProxyType({text: attribute}), [text], frozenset({text}))
    assert evaluated(py(value)) == value
    assert evaluated(docstring(text)) == text


def test_plain_values_round_trip() -> None:
    for value in [None, True, False, 0, -7, 2**40, 1.5, -0.0, float("inf"), float("-inf"), "", (), (1,), [1, 2],
                  frozenset(), frozenset({3, 1, 2}), {}, {"a": (1, "b")}, FormalParameterOption.Variadic]:
        assert evaluated(py(value)) == value
        assert type(evaluated(py(value))) is type(value)
    assert py(float("nan")) == 'float("nan")'
    assert py(frozenset({"b", "a"})) == "frozenset({'a', 'b'})"  # sorted: deterministic


def test_records_list_only_fields_that_differ_from_defaults() -> None:
    param = FormalParameter(name="X", type_str="T", types=frozenset({"tensor(float)"}),
                            option=FormalParameterOption.Optional)
    assert py(param) == ("FormalParameter(\n    name='X',\n    type_str='T',\n"
                         "    types=frozenset({'tensor(float)'}),\n    option=FormalParameterOption.Optional,\n)")
    assert evaluated(py((param, param))) == (param, param)


def test_named_values_are_written_by_name_and_only_values_of_the_same_type() -> None:
    types = frozenset({"tensor(float)", "tensor(double)"})
    param = FormalParameter(name="X", type_str="T", types=types, description="long text")
    writer = LiteralWriter({types: "_TYPES_0"})
    assert "types=_TYPES_0," in writer.write(param)
    writer.name("long text", "_TEXT_0")
    writer.name(1, "ONE")
    assert "description=_TEXT_0," in writer.write(param)
    assert writer.write((1, True, 1.0)) == "(ONE, True, 1.0)"  # True == 1 == 1.0, yet only the int is named
    writer.name(param, "_PARAM_0")
    assert writer.write((param,)) == "(\n    _PARAM_0,\n)"


def test_a_named_member_of_a_set_is_written_by_name_even_after_the_set_was_written_plainly() -> None:
    types = frozenset({"tensor(float)", "tensor(int64)"})
    assert py(types) == "frozenset({'tensor(float)', 'tensor(int64)'})"
    assert py(types, {"tensor(int64)": "DOC"}) == "frozenset({'tensor(float)', DOC})"
    assert py(types) == "frozenset({'tensor(float)', 'tensor(int64)'})"


def test_values_that_are_not_data_are_refused() -> None:
    with pytest.raises(TypeError, match="cannot render object"):
        py(object())


@pytest.mark.parametrize("text", ["", "plain", "two\nlines", "\n", "\n\n", "tab\there", 'say "hi"', "back\\slash",
                                  "ends with quote\"", "é ∑", "\u2028", "a\r\nb"])
def test_docstrings_are_exact(text: str) -> None:
    literal = docstring(text)
    assert evaluated(literal) == text
    assert literal.startswith('"""') == (text in ("", "plain", "two\nlines", "é ∑"))
