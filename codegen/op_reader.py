"""Read one op file's document into its declaration: versions, signatures, attributes, types, rules."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.model import (
    AttrDecl,
    DomainDecl,
    ExampleDecl,
    OpDecl,
    ParamDecl,
    RuleDecl,
    TypeParamDecl,
    VersionDecl,
)
from opspec.codegen.notation import (
    DIFFERENTIATION,
    ATTR_TYPES,
    AttrSpec,
    NotationError,
    ParamSpec,
    parse_attribute,
    parse_param,
)
from opspec.codegen.source import Location, Map, Seq
from opspec.runtime.schema import DimRelation, DimRelationKind, FormalParameterOption, ValueConstraint


def _field_locations(document: Map) -> dict[str, Location]:
    """Where the ``op`` key and each descriptive field present are written."""
    return {name: document.key_at(name) for name in ("op", "summary", "doc", "docs") if name in document}


def read_op(document: Map, domain: DomainDecl, family: str, path: str, diagnostics: Diagnostics) -> OpDecl:
    op = OpDecl(
        name=document["op"],
        domain=domain.name,
        family=family,
        path=path,
        location=document.value_at("op"),
        summary=document.get("summary", ""),
        doc=document.get("doc", ""),
    )
    docs = document.get("docs", Map())
    op.docs = dict(docs)
    op.doc_locations = {name: docs.key_at(name) for name in docs}
    op.field_locations = _field_locations(document)
    versions = document["versions"]
    for key, body in versions.items():
        op.versions.append(_read_version(int(key), body, versions.key_at(key), diagnostics))
    return op


def _read_version(since: int, body: Map, location: Location, diagnostics: Diagnostics) -> VersionDecl:
    version = VersionDecl(since=since, location=location, notes=body.get("notes", ""))
    if "inputs" in body:
        version.inputs = _read_params(body["inputs"], diagnostics)
    if "outputs" in body:
        version.outputs = _read_params(body["outputs"], diagnostics)
    attributes = body.get("attributes", Map())
    for name, value in attributes.items():
        version.attribute_locations[name] = attributes.key_at(name)
        if value is None:
            version.attributes[name] = None
            continue
        declared = _read_attribute(name, value, attributes, diagnostics)
        if declared is not None:
            version.attributes[name] = declared
    types = body.get("types", Map())
    for name, value in types.items():
        version.type_locations[name] = types.key_at(name)
        version.types[name] = _read_type_param(name, value, types.key_at(name), types.value_at(name))
    if "inference" in body:
        version.inference_set = True
        version.inference = _read_rule(body["inference"], body.value_at("inference"))
    if "convert" in body:
        version.convert = _plain_value(body["convert"])
        version.convert_location = body.value_at("convert")
    if "deprecated" in body:
        version.deprecated = body["deprecated"]
    examples = body.get("examples", ())
    version.examples = tuple(
        ExampleDecl(dict(example.get("inputs", {})), dict(example.get("attributes", {})), examples.item_at(index),
                    example.get("outputs"))
        for index, example in enumerate(examples)
    )
    return version


Parsed = TypeVar("Parsed")


def _shorthand(parse: Callable[[str], Parsed], text: str, mapping: Map, name: str, what: str,
               diagnostics: Diagnostics) -> Parsed | None:
    """``parse(text)`` of a one-line declaration, or None after an error located at the character
    where the notation breaks."""
    try:
        return parse(text)
    except NotationError as error:
        diagnostics.error(mapping.inside_value(name, error.offset), f"{what} {name!r}: {error}")
        return None


def _read_params(params: Map, diagnostics: Diagnostics) -> tuple[ParamDecl, ...]:
    declared = []
    for name, value in params.items():
        where = params.value_at(name)
        if isinstance(value, str):
            spec = _shorthand(parse_param, value, params, name, "input/output", diagnostics)
            if spec is not None:
                declared.append(ParamDecl(str(name), spec, params.key_at(name), where))
            continue
        option = FormalParameterOption[value.get("option", "single").capitalize()]
        spec = ParamSpec(
            type_str=value["type"].replace(" ", ""),
            option=option,
            min_arity=value.get("min_arity", 1),
            is_homogeneous=value.get("homogeneous", True),
            differentiation=DIFFERENTIATION[value.get("differentiability", "unknown")],
        )
        if not spec.is_homogeneous and option is not FormalParameterOption.Variadic:
            diagnostics.error(value.key_at("homogeneous"), "only a variadic can be heterogeneous")
        declared.append(ParamDecl(str(name), spec, params.key_at(name), value.value_at("type"), value.get("doc")))
    return tuple(declared)


_BOUND_KEYS = ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "ignore_case", "min_length",
               "max_length", "axis_of", "axis_extra", "length_of", "length_scale", "length_offset", "length_as")


def _read_attribute(name: str, value: Any, attributes: Map, diagnostics: Diagnostics) -> AttrDecl | None:
    where = attributes.value_at(name)
    if isinstance(value, str):
        shorthand = _shorthand(parse_attribute, value, attributes, name, "attribute", diagnostics)
        return None if shorthand is None else AttrDecl(str(name), shorthand, where)
    bounds = {key: value[key] for key in _BOUND_KEYS if key in value}
    if "allowed" in value:
        bounds["allowed"] = tuple(value["allowed"])
    if value.get("relations"):
        bounds["relations"] = tuple(_read_relation(item, value["relations"].item_at(index), diagnostics)
                                    for index, item in enumerate(value["relations"]))
    if value.get("required") and "default" in value:
        diagnostics.error(value.key_at("default"), f"attribute {name!r} cannot be both required and defaulted")
    spec = AttrSpec(
        type=ATTR_TYPES[value["type"]],
        required=bool(value.get("required", False)),
        default=value.get("default"),
        constraint=ValueConstraint(**bounds) if bounds else None,
    )
    return AttrDecl(str(name), spec, where, value.get("doc"))


def _read_relation(item: Map, where: Location, diagnostics: Diagnostics) -> DimRelation:
    """A dim relation in long form: ``{relation: divides, input: query, axis: -1, rank: 3, named: ...}``."""
    size = item.get("size")  # its grammar and names are checked with the version's attributes
    kind = DimRelationKind[item["relation"].upper()]
    if (kind is DimRelationKind.SIZE) != (size is not None):
        diagnostics.error(where, "a size relation, and only a size relation, gives 'size'")
    return DimRelation(kind, item["input"], item["axis"], item.get("rank"), size, item.get("named"),
                       item.get("unless"), item.get("present"))


def _read_type_param(name: str, value: Any, key_at: Location, value_at: Location) -> TypeParamDecl | None:
    if value is None:
        return None
    doc = None
    if isinstance(value, Map):
        doc, value, value_at = value.get("doc"), value["types"], value.value_at("types")
    if isinstance(value, Seq):
        items = tuple(zip((item.replace(" ", "") for item in value), value.item_locations))
    else:
        items = ((value.replace(" ", ""), value_at),)
    return TypeParamDecl(str(name), items, key_at, doc)


def _read_rule(value: Any, where: Location) -> RuleDecl | None:
    if value is None:
        return None
    if isinstance(value, str):
        return RuleDecl(value, {}, where)
    args = {key: item for key, item in value.items() if key != "rule"}
    return RuleDecl(
        value["rule"], args, value.value_at("rule"), {key: value.value_at(key) for key in args}
    )


def _plain_value(value: Any) -> Any:
    """A located YAML value as plain dicts, tuples and scalars."""
    if isinstance(value, dict):
        return {str(key): _plain_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_plain_value(item) for item in value)
    return value
