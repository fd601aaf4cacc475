"""An operator's function body as a whole function in ONNX's textual syntax, for its docs page.

The YAML holds only the body's node statements; the header (domain, opset import, the
attributes it refers to, inputs and outputs) follows from the schema, so the listing is
what ``onnx.printer`` prints for the same ``FunctionProto``.
"""
from __future__ import annotations

from functools import lru_cache

from opspec.runtime.function_text import parse_nodes, references
from opspec.runtime.schema import FunctionBody, OpSchema

#: Indentation of the body's statements (onnx.printer's).
_INDENT = "   "


def function_listing(schema: OpSchema, body: FunctionBody) -> str:
    """``body`` of ``schema`` as a complete function: header, signature and statements."""
    attributes = _references(body.text)
    inputs = ", ".join(p.name for p in schema.inputs)
    outputs = ", ".join(p.name for p in schema.outputs)
    signature = f"{schema.name} <{','.join(attributes)}>" if attributes else f"{schema.name} "
    statements = "\n".join(f"{_INDENT}{line}" if line.strip() else "" for line in body.text.strip("\n").splitlines())
    return (f'<\n  domain: "{schema.domain}",\n  opset_import: ["{schema.domain}" : {body.opset}]\n>\n'
            f"{signature}({inputs}) => ({outputs})\n{{\n{statements}\n}}")


@lru_cache(maxsize=1024)
def _references(text: str) -> tuple[str, ...]:
    """The operator attributes a body's statements refer to, parsed once per distinct body."""
    return tuple(references(parse_nodes(text)))


__all__ = ["function_listing"]
