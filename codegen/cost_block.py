"""Checking a version's ``cost`` block against the version it describes."""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from opspec.codegen.diagnostics import Diagnostics
from opspec.codegen.model import CostDecl
from opspec.codegen.source import Location
from opspec.runtime.cost.kinds import BLOCK_KEYS, CODE_COSTS, COST_KINDS, Measure
from opspec.runtime.formula import FormulaNames, formula_problems
from opspec.runtime.schema import FormalParameterOption, OpSchema

_MEASURES = tuple(measure.value for measure in Measure)


def formula_names(schema: OpSchema) -> FormulaNames:
    """What a formula of ``schema``'s version may name."""
    variadic_in = any(p.option is FormalParameterOption.Variadic for p in schema.inputs)
    variadic_out = any(p.option is FormalParameterOption.Variadic for p in schema.outputs)
    return FormulaNames(
        inputs=tuple(p.name for p in schema.inputs), outputs=tuple(p.name for p in schema.outputs),
        attributes={name: attribute.type.name.lower() for name, attribute in schema.attributes.items()},
        max_inputs=None if variadic_in else len(schema.inputs),
        max_outputs=None if variadic_out else len(schema.outputs),
    )


def cost_block(declared: CostDecl | None, schema: OpSchema, diagnostics: Diagnostics) -> Mapping[str, str]:
    """The block as the registry holds it, after every problem in it went to ``diagnostics``:
    keys are known, a kind or a code cost exists, and every formula (the kind's too) fits the version."""
    if declared is None:
        return MappingProxyType({})
    block = declared.block
    names = formula_names(schema)

    def at(key: str, offset: int = 0) -> Location:
        start = declared.value_locations.get(key, declared.location)
        return Location(start.path, start.line, start.column + offset)

    for key in block:
        if key not in BLOCK_KEYS and key not in _MEASURES:
            diagnostics.error(at(key), f"cost: unknown key {key!r} (known: {', '.join(BLOCK_KEYS + _MEASURES)})")
    if "unknown" in block and len(block) > 1:
        diagnostics.error(declared.location, "cost: 'unknown' says why there is no cost; it stands alone")
    if "code" in block and block["code"] not in CODE_COSTS:
        diagnostics.error(at("code"), f"cost: no cost in code named {block['code']!r} "
                                      f"(known: {', '.join(sorted(CODE_COSTS))})")
    kind = block.get("kind")
    if kind is not None:
        if kind not in COST_KINDS:
            diagnostics.error(at("kind"), f"cost: unknown kind {kind!r} (known: {', '.join(COST_KINDS)})")
        else:
            for measure, text in COST_KINDS[kind].items():
                if measure in block:
                    continue
                for message, _ in formula_problems(text, names):
                    diagnostics.error(at("kind"), f"cost kind {kind!r} does not fit this version: "
                                                  f"{measure} = {text}: {message}")
    for measure in _MEASURES:
        if measure in block:
            for message, offset in formula_problems(block[measure], names):
                diagnostics.error(at(measure, offset), f"cost {measure}: {message}")
    return MappingProxyType(dict(block))


_MEASURE_NAMES = {"macs": "multiply-accumulates", "flops": "other arithmetic", "transcendental": "transcendental",
                  "bytes_read": "bytes read", "bytes_written": "bytes written"}
_DEFAULTS = {"bytes_read": "every input the node supplies", "bytes_written": "every output"}


def cost_text(block: Mapping[str, str]) -> str:
    """The op page's cost section: the formulas of a version's block, a kind's spelled out (empty
    when the version declares no cost, so the page has no such section)."""
    if not block:
        return ""
    if "unknown" in block:
        return f"Not stated: {block['unknown']}."
    if "code" in block:
        return f"Computed in code (`{block['code']}`): {CODE_COSTS.get(block['code'], '')}."
    kind = block.get("kind")
    formulas = {**COST_KINDS.get(kind or "", {}), **{k: v for k, v in block.items() if k != "kind"}}
    rows = ["| Measure | Formula |", "|---|---|"]
    for measure in _MEASURES:
        text = formulas.get(measure)
        shown = f"`{text}`" if text is not None else (_DEFAULTS.get(measure) or "0")
        rows.append(f"| {_MEASURE_NAMES[measure]} | {shown} |")
    lead = f"Kind `{kind}`" + (", with formulas of its own" if len(formulas) > len(COST_KINDS.get(kind, {})) else "") \
        + ".\n\n" if kind else ""
    return lead + "\n".join(rows) + "\n\nA report counts each multiply-accumulate as 2 FLOPs."
