"""Lookups behave like onnx.defs: version resolution, domain spellings, errors, enums."""
from __future__ import annotations

import onnx.defs
import pytest
from registries import load_package

import opspec
from opspec.runtime.schema import (
    AttrType,
    DifferentiationCategory,
    FormalParameter,
    FormalParameterOption,
    OpSchema,
    Record,
)


@pytest.mark.parametrize("requested, expected", [(None, 14), (14, 14), (13, 13), (12, 7), (7, 7), (6, 6),
                                                 (5, 1), (1, 1), (100, 14)])
def test_version_resolution_picks_newest_not_after(requested, expected):
    assert opspec.get_schema("Add", requested).since_version == expected
    assert onnx.defs.get_schema("Add", requested or 28).since_version == expected


def test_keyword_arguments_and_domain_spellings():
    schema = opspec.get_schema("Relu", max_inclusive_version=13, domain="")
    assert schema is opspec.get_schema("Relu", 13, "ai.onnx")
    assert schema.domain == ""
    assert opspec.get_schema("Relu", domain="ai.onnx").since_version == 14


def test_lookups_are_cached_and_shared():
    assert opspec.get_schema("Conv") is opspec.get_schema("Conv", 22)
    assert opspec.get_schema("Conv", 21) is opspec.get_schema("Conv", 11)


@pytest.mark.parametrize("args, message", [
    (("Nope",), "no operator 'Nope' in domain 'ai.onnx'"),
    (("Add", None, "com.nowhere"), "unknown domain 'com.nowhere'"),
    (("Erf", 8), "operator 'Erf' has no version at or before 8 (its first is 9)"),
])
def test_failed_lookups_raise_schema_error(args, message):
    with pytest.raises(opspec.SchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        opspec.get_schema(*args)
    assert not opspec.has_schema(*args)
    assert issubclass(opspec.SchemaError, LookupError)


def test_has_schema_and_listings():
    assert opspec.has_schema("Erf", 9) and opspec.has_schema("Erf")
    latest = opspec.get_all_schemas()
    history = opspec.get_all_schemas_with_history()
    assert len(latest) == len({(s.domain, s.name) for s in history}) < len(history)
    assert all(s is opspec.get_schema(s.name, None, s.domain) for s in latest)


def test_domain_ranges_match_onnx():
    assert opspec.schema_version_map()[""] == onnx.defs.C.schema_version_map()[""]
    assert opspec.domain_version_range("ai.onnx") == (1, 28)
    assert opspec.onnx_opset_version() == onnx.defs.onnx_opset_version()


def test_enum_member_names_match_onnx():
    theirs = onnx.defs.OpSchema  # its stubs omit the pybind11 enums' __members__ and .name
    assert set(AttrType.__members__) == set(theirs.AttrType.__members__)  # type: ignore[attr-defined]
    assert list(FormalParameterOption.__members__) == list(
        theirs.FormalParameterOption.__members__)  # type: ignore[attr-defined]
    assert list(DifferentiationCategory.__members__) == list(
        theirs.DifferentiationCategory.__members__)  # type: ignore[attr-defined]
    assert OpSchema.AttrType is AttrType and OpSchema.FormalParameterOption is FormalParameterOption


def test_records_are_named_tuples_of_their_annotated_fields():
    assert FormalParameter._fields[:3] == ("name", "type_str", "types")
    param = FormalParameter("X", "T", frozenset({"tensor(float)"}))
    assert param.option is FormalParameterOption.Single and param.min_arity == 1 and param[0] == "X"
    assert param._replace(min_arity=2) == FormalParameter("X", "T", frozenset({"tensor(float)"}), min_arity=2)
    with pytest.raises(TypeError, match="follows one with a default"):
        type("Bad", (Record,), {"__annotations__": {"a": "int", "b": "int"}, "a": 1})
    with pytest.raises(TypeError, match="declares its fields"):
        type("Empty", (Record,), {})


def test_schema_objects_read_like_onnx_ones():
    ours, theirs = opspec.get_schema("Split", 18), onnx.defs.get_schema("Split", 18)
    for mine, reference in zip(ours.inputs + ours.outputs, list(theirs.inputs) + list(theirs.outputs)):
        assert (mine.name, mine.type_str, mine.types, mine.option.name, mine.is_homogeneous, mine.min_arity) == (
            reference.name, reference.type_str, reference.types,
            reference.option.name,  # type: ignore[attr-defined]  # a pybind11 enum: onnx's stubs omit .name
            reference.is_homogeneous,
            reference.min_arity)
    assert ours.max_output == theirs.max_output == 2**31 - 1
    assert ours.attributes["num_outputs"].default is None
    assert ours.type_constraints[0].type_param_str == "T"
    assert ours.inference is not None and ours.inference.name == "split"
    with pytest.raises(AttributeError):
        ours.name = "Other"  # type: ignore[misc]  # the failure under test


def test_deprecation_is_reported(tmp_path):
    from opspec.codegen.generate import REPO, generate

    out = tmp_path / "example_ops"
    generate(REPO / "examples/custom_ops/opdefs", out)
    registry = load_package(out)
    assert registry.get_schema("ScaledAdd", 3, "com.example").deprecated
    assert not registry.get_schema("ScaledAdd", 2, "example").deprecated
    assert registry.domain_version_range("com.example") == (1, 3)


def test_a_package_may_come_with_its_schemas_instead_of_modules_to_import():
    """An op set compiled in this process is looked up without writing or importing any module."""
    import sys
    from types import ModuleType

    from opspec.runtime.defs import REGISTRY_PACKAGE
    from opspec.runtime.registry import Registry

    relu = opspec.get_schema("Relu", 14)
    index = ModuleType("an_index_never_imported")
    vars(index).update(DOMAINS=({"name": "ai.onnx", "node_domain": "", "aliases": (), "opset_min": 1,
                                 "opset_max": 99, "extends": True},),
                       OPS={"ai.onnx": {"Relu": ("relu_later", (99,))}})
    later = relu._replace(since_version=99)
    registry = Registry()
    registry.add_package(REGISTRY_PACKAGE)
    registry.add_package(index, {"relu_later": (later,)})
    assert registry.get_schema("Relu", 99) is later and registry.get_schema("Relu", 98) is relu
    assert [schema.since_version for schema in registry.schemas_of("Relu")][-2:] == [14, 99]
    assert not any(name.startswith("an_index_never_imported") for name in sys.modules)
