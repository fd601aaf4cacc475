"""One version step of one node: from a schema version to the next one up or down.

What a step needs is computed from the two schemas: an attribute that became an input
of the same name (or of the name the newer version's ``convert: inputs_from`` gives) moves
between the two, a default that changed is written out, an attribute or input the
other version lacks must be absent or at its default, and every type must be one the
other version accepts. Changes the signature cannot show are declared in the newer
version's ``convert`` block (``by``: ``signature`` or a Python adapter; ``new_values``:
attribute values the older version lacks) and checked here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opspec.runtime.convert.values import GraphValues, Refusal, ValueType
from opspec.runtime.convert.work_node import Surrounding, WorkNode, bind_formals
from opspec.runtime.contract.elements import ELEMENT_TYPES
from opspec.runtime.schema import Attribute, AttrType, FormalParameter, FormalParameterOption, OpSchema
from opspec.runtime.types import formal_type_string, is_type_string

if TYPE_CHECKING:
    from opspec.runtime.convert.adapters import Adapter

_FLOAT_KINDS = (AttrType.FLOAT, AttrType.FLOATS)
_LIST_KINDS = (AttrType.INTS, AttrType.FLOATS)


def moved_attributes(older: OpSchema, newer: OpSchema) -> dict[str, tuple[str, tuple[int, ...] | None]]:
    """Inputs of ``newer`` that were attributes of ``older``: input -> (attribute, tensor shape
    for a single value, None for the attribute's own length)."""
    declared = dict(newer.convert.get("inputs_from", {}))
    older_inputs = {formal.name for formal in older.inputs}
    moved: dict[str, tuple[str, tuple[int, ...] | None]] = {}
    for formal in newer.inputs:
        if formal.name in older_inputs:
            continue
        source = declared.get(formal.name, formal.name)
        shape: tuple[int, ...] | None = None
        if isinstance(source, (list, tuple)):  # [name]: a one-element 1-D tensor
            source, shape = source[0], (1,)
        if source in older.attributes and source not in newer.attributes:
            moved[formal.name] = (source, shape)
    return moved


def run_step(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> Surrounding:
    """Rewrite ``node`` from ``source`` to the adjacent version ``target``, or raise :class:`Refusal`;
    returns the nodes an adapter wrote around it (for opset ``target.since_version``)."""
    up = target.since_version > source.since_version
    older, newer = (source, target) if up else (target, source)
    how = newer.convert.get("by")
    where = f"{older.since_version} -> {newer.since_version}" if up else f"{newer.since_version} -> {older.since_version}"
    if target.deprecated:
        raise Refusal(f"version {target.since_version} of {target.name} is deprecated")
    if how is None and newer.change_class == "breaking":
        raise Refusal(f"{newer.name} changes meaning between versions {older.since_version} and "
                      f"{newer.since_version} in a way no conversion is declared for")
    check_new_values(node, newer, values, up)
    if not up:
        if how is None and newer.change_class == "semantic" and "new_values" not in newer.convert:
            raise Refusal(f"{newer.name} {newer.since_version} means something version {older.since_version} "
                          f"does not, and no conversion down is declared ({where})")
    around = Surrounding()
    adapter = step_adapter(newer)
    if adapter is not None:
        done = adapter(node, source, target, values)
        if done is True:
            return around
        if isinstance(done, Surrounding):
            around = done
    _signature(node, source, target, values, moved_attributes(older, newer), up)
    return around


def step_adapter(newer: OpSchema) -> Adapter | None:
    """The Python adapter ``newer``'s convert block names for the step from the version before (None
    where the signature says it all)."""
    how = newer.convert.get("by")
    if how in (None, "signature"):
        return None
    from opspec.runtime.convert.adapters import ADAPTERS

    return ADAPTERS[how]


def check_new_values(node: WorkNode, newer: OpSchema, values: GraphValues, up: bool) -> None:
    """Refuse values the older version reads differently (a list of values: checked both ways).
    Negative values (``negative``, ``negative_in_output``) are ones the older version rejects: a
    valid older model has none, so only going down are they looked for, and there negative axes
    are counted from the front where the rank is known (``negative``: the first input's;
    ``negative_in_output``: the output's, which has one axis more per entry)."""
    for name, banned in newer.convert.get("new_values", {}).items():
        if up and isinstance(banned, str):
            continue
        found: list = []
        if name in node.attributes:
            value = node.value(name)
            found = list(value) if isinstance(value, (list, tuple)) else [value]
            if isinstance(banned, str) and any(item < 0 for item in found):
                _count_from_front(node, name, found, banned, values)
                continue
        else:
            actuals = bind_formals(newer.inputs, node.inputs).get(name, [])
            actual = actuals[0] if actuals else ""
            if actual and isinstance(banned, str) and actual in values.non_negative:
                continue
            if actual:
                constant = values.values_of(actual)
                if constant is None:
                    raise Refusal(f"input '{name}' must be a constant to tell whether version "
                                  f"{newer.since_version - 1} reads it the same")
                found = list(constant[1])
        for item in found:
            if (isinstance(banned, str) and item < 0) or (not isinstance(banned, str) and item in banned):
                raise Refusal(f"{name} = {item!r} is new in version {newer.since_version}")


def _count_from_front(node: WorkNode, name: str, found: list, how: str, values: GraphValues) -> None:
    known = values.type_of(node.inputs[0]) if node.inputs else None
    if known is None or known.rank is None:
        raise Refusal(f"{name} counts from the back of an input of unknown rank, which older versions cannot say")
    rank = known.rank + (len(found) if how == "negative_in_output" else 0)
    counted = [item + rank if item < 0 else item for item in found]
    kind = node.attributes[name].type
    node.set(name, AttrType(kind), counted if AttrType(kind).is_list else counted[0])


def _match(source: tuple[FormalParameter, ...], target: tuple[FormalParameter, ...],
           moved: set[str], by_place: bool = True) -> dict[str, str]:
    """Target formal -> source formal: by name, else (``by_place``) the one at the same place with
    the same option."""
    names = {formal.name for formal in source}
    targets = {formal.name for formal in target}
    matched = {}
    for index, formal in enumerate(target):
        if formal.name in names:
            matched[formal.name] = formal.name
        elif by_place and formal.name not in moved and index < len(source):
            other = source[index]
            if other.name not in targets and other.name not in moved and other.option == formal.option:
                matched[formal.name] = other.name
    return matched


def _signature(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues,
               moved: dict[str, tuple[str, tuple[int, ...] | None]], up: bool) -> None:
    bound = bind_formals(source.inputs, node.inputs)
    matched = _match(source.inputs, target.inputs, set(moved))
    used_sources = set(matched.values())
    inputs: list[str] = []
    for formal in target.inputs:
        if formal.name in matched:
            actuals = bound.get(matched[formal.name], [])
        elif up and formal.name in moved:
            actuals = [_attribute_to_input(node, source, formal, target, *moved[formal.name], values)]
        else:
            actuals = []
        if not any(actuals) and formal.option == FormalParameterOption.Single:
            raise Refusal(f"version {target.since_version} needs input '{formal.name}'")
        inputs.extend(actuals or [""])
        if formal.option == FormalParameterOption.Variadic:
            break
    for formal in source.inputs:
        actuals = [a for a in bound.get(formal.name, []) if a]
        if formal.name in used_sources or not actuals:
            continue
        if not up and formal.name in moved:
            _input_to_attribute(node, target, actuals[0], *moved[formal.name], values)
        else:
            raise Refusal(f"input '{formal.name}' is given, and version {target.since_version} has no such input")
    node.inputs = inputs
    _outputs(node, source, target)
    _attributes(node, source, target, {attribute for attribute, _ in moved.values()})
    _types(node, source, target, values)


def _outputs(node: WorkNode, source: OpSchema, target: OpSchema) -> None:
    bound = bind_formals(source.outputs, node.outputs)
    matched = _match(source.outputs, target.outputs, set(), by_place=False)
    for formal in source.outputs:
        if formal.name not in matched.values() and any(bound.get(formal.name, [])):
            raise Refusal(f"output '{formal.name}' is used, and version {target.since_version} has no such output")
    outputs: list[str] = []
    for formal in target.outputs:
        actuals = bound.get(matched.get(formal.name, ""), [])
        if not any(actuals) and formal.option == FormalParameterOption.Single:
            raise Refusal(f"version {target.since_version} needs output '{formal.name}'")
        outputs.extend(actuals or [""])
        if formal.option == FormalParameterOption.Variadic:
            break
    while outputs and not outputs[-1]:
        outputs.pop()
    node.outputs = outputs


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(float(a) - float(b)) <= 1e-7 * max(1.0, abs(float(b)))
    return a == b


def _attributes(node: WorkNode, source: OpSchema, target: OpSchema, moved: set[str]) -> None:
    for name in list(node.attributes):
        if name in moved:
            continue
        wanted = target.attributes.get(name)
        had = source.attributes.get(name)
        if wanted is None:
            if had is not None and had.default is not None and _same(node.value(name), had.default):
                del node.attributes[name]
                continue
            raise Refusal(f"attribute '{name}' = {node.value(name)!r}, and version {target.since_version} "
                          f"has no such attribute")
        if node.attributes[name].ref_attr_name:
            continue
        if wanted.type != node.attributes[name].type:
            raise Refusal(f"attribute '{name}' is {AttrType(node.attributes[name].type).spelling}; version "
                          f"{target.since_version} needs {wanted.type.spelling}")
        if wanted.constraint is not None and wanted.constraint.violations(node.value(name)):
            raise Refusal(f"attribute '{name}' = {node.value(name)!r} is not allowed in version {target.since_version}")
    for name, wanted in target.attributes.items():
        if name in node.attributes:
            continue
        had = source.attributes.get(name)
        if had is None or name in moved:
            if wanted.required:
                raise Refusal(f"version {target.since_version} needs attribute '{name}'")
            continue
        if not _same(had.default, wanted.default):
            if had.default is None:
                raise Refusal(f"attribute '{name}' is absent, which versions {source.since_version} and "
                              f"{target.since_version} read differently")
            node.set(name, wanted.type, had.default)


def _attribute_to_input(node: WorkNode, source: OpSchema, formal: FormalParameter, target: OpSchema,
                        attribute_name: str, shape: tuple[int, ...] | None, values: GraphValues) -> str:
    spec: Attribute = source.attributes[attribute_name]
    value = node.value(attribute_name)
    node.attributes.pop(attribute_name, None)
    if value is None:
        value = spec.default
    if value is None:
        return ""
    elem = _input_element(node, formal, target, spec, values)
    items = list(value) if spec.type in _LIST_KINDS else [value]
    dims = (len(items),) if spec.type in _LIST_KINDS else (shape or ())
    return values.add_constant(f"{node.outputs[0]}_{formal.name}", elem, dims, items)


def _input_element(node: WorkNode, formal: FormalParameter, target: OpSchema, spec: Attribute,
                   values: GraphValues) -> int:
    """The element type a moved attribute's value takes as an input."""
    if is_type_string(formal.type_str):
        return ELEMENT_TYPES[formal.type_str[len("tensor("):-1]]
    for other, actuals in bind_formals(target.inputs, node.inputs).items():
        peer = next(p for p in target.inputs if p.name == other)
        if peer.type_str == formal.type_str and actuals and actuals[0]:
            known = values.type_of(actuals[0])
            if known is not None:
                return known.elem
    preferred = "tensor(float)" if spec.type in _FLOAT_KINDS else "tensor(int64)"
    if preferred in formal.types:
        return ELEMENT_TYPES[preferred[len("tensor("):-1]]
    raise Refusal(f"the element type that input '{formal.name}' needs is unknown")


def _input_to_attribute(node: WorkNode, target: OpSchema, actual: str, attribute_name: str,
                        shape: tuple[int, ...] | None, values: GraphValues) -> None:
    spec = target.attributes[attribute_name]
    constant = values.values_of(actual)
    if constant is None:
        raise Refusal(f"input '{actual}' is computed at run time; version {target.since_version} needs it "
                      f"as attribute '{attribute_name}'")
    items = list(constant[1])
    if spec.type in _LIST_KINDS:
        value: Any = items
    elif len(items) == 1:
        value = items[0]
    else:
        raise Refusal(f"input '{actual}' holds {len(items)} values; attribute '{attribute_name}' takes one")
    if spec.type in (AttrType.INT, AttrType.INTS) and not all(_integral(v) for v in items):
        raise Refusal(f"input '{actual}' holds values that are not integers")
    node.set(attribute_name, spec.type, value)


def _integral(item: Any) -> bool:
    """Whether a tensor's item is a whole number (an integer tensor's always is, even past a float's
    precision, as the INT64_MAX that exporters write for "to the end" is)."""
    return isinstance(item, int) or (isinstance(item, float) and item.is_integer())


def check_types(node: WorkNode, schema: OpSchema, values: GraphValues) -> None:
    """Refuse a node whose known types ``schema`` does not accept."""
    _types(node, schema, schema, values)


def _types(node: WorkNode, source: OpSchema, target: OpSchema, values: GraphValues) -> None:
    bound: dict[str, str] = {}
    for role in ("inputs", "outputs"):
        formals = getattr(target, role)
        before = {formal.name: formal.types for formal in getattr(source, role)}
        for name, actuals in bind_formals(formals, getattr(node, role)).items():
            formal = next(f for f in formals if f.name == name)
            for actual in actuals:
                if not actual:
                    continue
                known = values.types.get(actual)
                text = known.type_string if isinstance(known, ValueType) else known
                if text is None:
                    if before.get(name) == formal.types:
                        continue
                    raise Refusal(f"the type of '{actual}' is unknown, and versions {source.since_version} and "
                                  f"{target.since_version} accept different types")
                if formal_type_string(text) not in formal.types:
                    raise Refusal(f"'{actual}' is {text}, which version {target.since_version} does not accept")
                if not is_type_string(formal.type_str) and formal.is_homogeneous:
                    if bound.setdefault(formal.type_str, text) != text:
                        raise Refusal(f"version {target.since_version} needs one type for every value of "
                                      f"{formal.type_str}, and '{actual}' is {text}, not {bound[formal.type_str]}")
