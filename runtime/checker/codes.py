"""The stable ``code`` of every kind of problem ``opspec check`` reports.

Graph and model problems carry their code from where they are found; a node's problem
(from its schema, its attribute constraints or its inference rule) gets its code from the
form of its message, which :mod:`opspec.runtime.inference.checks` keeps fixed, except a
broken attribute constraint, which carries its violation.
"""
from __future__ import annotations

import re
from typing import Any

#: Every code, with what it means (the documentation's table is made from this).
CODES: dict[str, str] = {
    "ir-version": "the model's IR version is outside the versions opspec reads",
    "opset-version": "an opset import's version is below 1 or beyond the newest the op set knows",
    "opset-import": "a domain is used without an opset import, or imported at two versions",
    "opset-import-repeated": "(a note, not a problem) a domain is imported more than once at the same version",
    "metadata": "the model's metadata_props give a key more than once",
    "graph-name": "a graph has no name",
    "value-info": ("a graph input or output has no name, no type, a type with no kind, or a type missing what it "
                   "holds (an ONNX element type, a key or value type, an opaque name)"),
    "tensor-data-type": "a stored tensor's data type is UNDEFINED or not an ONNX data type",
    "tensor-dims": "a stored tensor has a negative dim",
    "tensor-data-field": "a stored tensor's data is in no field, in two, or in the wrong one for its data type",
    "tensor-data-count": "a stored tensor holds more or fewer values (or raw bytes) than its dims need",
    "external-data": "external tensor data without a location, outside the model's folder, or missing",
    "sparse-tensor": "a sparse tensor's values or indices have the wrong rank or count, or an index is out of range",
    "function-form": "a model-local function has no name or no domain",
    "node-form": "a node has no op_type, or neither inputs nor outputs",
    "attribute-form": "an attribute has no name or no type, or fills more than one value field",
    "attribute-duplicate": "a node gives the same attribute twice",
    "attribute-type": "an attribute's type disagrees with its value field or with the schema",
    "attribute-unknown": "a node sets an attribute its schema does not declare",
    "attribute-missing": "a required attribute is missing",
    "attribute-value": "an attribute's value breaks the constraint its schema declares",
    "node-arity": "a node has too many or too few inputs or outputs, or misses a required input",
    "input-type": "an input's type is not one its schema allows, or differs from another bound to the same type parameter",
    "output-type": "an output would have a type its schema does not allow",
    "unknown-op": "an op with no schema in any known op set (the node cannot be checked)",
    "declared-conflict": "a value's declared type or shape contradicts what inference proves",
    "inference": "the op's inference rule rejects the node (shapes or values that cannot work together)",
    "undefined-value": "a node reads a value nothing defines",
    "topological-order": "a node reads a value a later node produces",
    "duplicate-name": "a value, input or initializer is named more than once",
    "graph-output": "a graph output is produced by nothing",
    "graph-structure": "another problem of a graph's structure",
    # with --runtime (see runtime_support)
    "no-kernel": "the execution provider has no kernel for the node's op version and the types bound to its "
                 "type parameters, and the runtime has no fallback for it",
    "kernel-refuses": "the execution provider has a kernel for the node, and the kernel refuses the node's types or "
                      "attributes when it is created or run",
    "runtime-version": "the model's IR version or an opset import is newer than the runtime loads",
    "unknown-domain": "a node's domain is neither one the runtime knows nor a model-local function's",
    "unknown-to-runtime": "the runtime knows no schema for the node's op at the version the model's opset gives",
}

_NODE_CODES = (
    (re.compile(r"cannot be checked: "), "unknown-op"),
    (re.compile(r"(takes .* (input|output)s?, got \d+|required input .* is missing)"), "node-arity"),
    (re.compile(r"^unknown attribute '"), "attribute-unknown"),
    (re.compile(r"^required attribute '.*' is missing"), "attribute-missing"),
    (re.compile(r"^attribute '[^']*' must be [a-z_]+, got "), "attribute-type"),
    (re.compile(r"^input \d+ .* has type "), "input-type"),
    (re.compile(r"^output \d+ .* would have type "), "output-type"),
    (re.compile(r"inferred type .* conflicts with the declared "), "declared-conflict"),
)


def node_code(error: Any) -> str:
    """The code of a node's problem (a ``NodeError``): ``attribute-value`` for a broken
    attribute constraint, else from the form of its message."""
    if error.violations:
        return "attribute-value"
    message = error.message
    for pattern, code in _NODE_CODES:
        if pattern.search(message):
            return code
    return "inference"


__all__ = ["CODES", "node_code"]
