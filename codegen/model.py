"""Declarations read from an opdefs tree, before versions are resolved.

These records mirror the YAML closely and keep a :class:`Location` on everything, so
the semantic checks and the resolver can point back at the source. Resolution turns
them into :class:`opspec.runtime.schema.OpSchema` values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opspec.codegen.notation import AttrSpec, ParamSpec
from opspec.codegen.source import Location


@dataclass(frozen=True)
class ParamDecl:
    """A formal input or output as declared in one version."""

    name: str
    spec: ParamSpec
    location: Location
    type_location: Location
    doc: str | None = None


@dataclass(frozen=True)
class AttrDecl:
    """An attribute as declared in one version."""

    name: str
    spec: AttrSpec
    location: Location
    doc: str | None = None


@dataclass(frozen=True)
class TypeParamDecl:
    """A type parameter: type set names and type strings, each with its location."""

    name: str
    items: tuple[tuple[str, Location], ...]
    location: Location
    doc: str | None = None


@dataclass(frozen=True)
class RuleDecl:
    """A reference to an inference rule, with its arguments."""

    name: str
    args: dict[str, Any]
    location: Location
    arg_locations: dict[str, Location] = field(default_factory=dict)


@dataclass(frozen=True)
class ExampleDecl:
    """A worked example: symbolic inputs (``"(N, C, H, W)"``, ``"int64 [0, -1]"``; several for
    a variadic input, separated by ``;``), attributes, and how many outputs the node has
    (None: the required ones, at least one)."""

    inputs: dict[str, str]
    attributes: dict[str, Any]
    location: Location
    outputs: int | None = None


@dataclass(frozen=True)
class FunctionDecl:
    """Function bodies of a version: ``(opset, text, location)`` each, and the opsets of code-built ones."""

    bodies: tuple[tuple[int, str, Location], ...]
    context_dependent: tuple[int, ...]
    location: Location


@dataclass(frozen=True)
class CostDecl:
    """A version's ``cost`` block as written: a kind name, formulas by measure, a code cost's
    name or why the cost is unknown (all text), with where each value starts."""

    block: dict[str, str]
    location: Location
    #: Where each value's text starts, for errors located inside a formula.
    value_locations: dict[str, Location] = field(default_factory=dict)


@dataclass
class VersionDecl:
    """One version of an operator: the full first version, or a change to the previous one.

    ``inputs``/``outputs`` are None when inherited; ``attributes`` and ``types`` map a
    name to a declaration, or to None when this version removes it.
    """

    since: int
    location: Location
    inputs: tuple[ParamDecl, ...] | None = None
    outputs: tuple[ParamDecl, ...] | None = None
    attributes: dict[str, AttrDecl | None] = field(default_factory=dict)
    attribute_locations: dict[str, Location] = field(default_factory=dict)
    types: dict[str, TypeParamDecl | None] = field(default_factory=dict)
    type_locations: dict[str, Location] = field(default_factory=dict)
    inference: RuleDecl | None = None
    inference_set: bool = False
    #: The ``cost`` block (None with ``cost_set``: the version has no cost).
    cost: CostDecl | None = None
    cost_set: bool = False
    deprecated: bool | None = None
    notes: str = ""
    examples: tuple[ExampleDecl, ...] = ()
    support_level: str | None = None
    determinism: str | None = None
    function: FunctionDecl | None = None
    function_set: bool = False
    allow: dict[str, Location] = field(default_factory=dict)
    type_order: tuple[str, ...] | None = None
    type_order_location: Location | None = None
    #: The ``convert`` block as written (plain values), and where it is.
    convert: dict[str, Any] = field(default_factory=dict)
    convert_location: Location | None = None


@dataclass
class OpDecl:
    """One operator file."""

    name: str
    domain: str
    family: str
    path: str
    location: Location
    summary: str = ""
    doc: str = ""
    versions: list[VersionDecl] = field(default_factory=list)
    docs: dict[str, str] = field(default_factory=dict)
    doc_locations: dict[str, Location] = field(default_factory=dict)
    #: Where the ``op`` key and those of ``summary``, ``doc`` and ``docs`` are written (those present).
    field_locations: dict[str, Location] = field(default_factory=dict)


@dataclass(frozen=True)
class DomainDecl:
    """One domain file."""

    name: str
    node_domain: str
    aliases: tuple[str, ...]
    opset_min: int
    opset_max: int
    path: str
    location: Location
    folder: str
    summary: str = ""
    doc: str = ""
    #: Adds versions to the domain of this name in the op set this tree layers over.
    extends: bool = False


@dataclass(frozen=True)
class TypeSetDecl:
    """A named, reusable set of types."""

    name: str
    items: tuple[tuple[str, Location], ...]
    location: Location
