"""The contract that inference rules are written against.

A rule module imports from here and from :mod:`opspec.runtime.shape`, nothing else of
opspec: the context a rule reads and writes, the value types, the element-type table,
the size limits, the typed argument readers and the ``rule`` declaration.
"""
from __future__ import annotations

from opspec.runtime.contract import elements
from opspec.runtime.contract.arguments import ABSENT, IntList, dims_of, element
from opspec.runtime.contract.context import InferenceContext, InferenceError, Subgraph
from opspec.runtime.contract.positions import bind_formals
from opspec.runtime.contract.declare import (
    RuleParam,
    RuleSpec,
    attribute,
    input,
    input_or_attribute,
    option,
    rule,
    rule_spec,
)
from opspec.runtime.contract.elements import BOOL, FLOAT, INT64, STRING, UNDEFINED
from opspec.runtime.contract.limits import DATA_LIMIT, MAX_DIM, MAX_RANK
from opspec.runtime.contract.positions import Operand
from opspec.runtime.contract.values import (
    Data,
    MapType,
    OptionalType,
    SequenceType,
    SparseTensorType,
    TensorType,
    TensorValue,
    type_string,
)

__all__ = [
    "ABSENT", "BOOL", "DATA_LIMIT", "Data", "FLOAT", "INT64", "InferenceContext", "InferenceError", "IntList",
    "MAX_DIM", "MAX_RANK", "MapType", "Operand", "OptionalType", "RuleParam", "RuleSpec", "STRING", "SequenceType",
    "SparseTensorType", "Subgraph", "TensorType", "TensorValue", "UNDEFINED", "attribute", "bind_formals",
    "dims_of", "element", "elements", "input", "input_or_attribute", "option", "rule", "rule_spec", "type_string",
]
