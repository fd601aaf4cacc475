"""Worked examples for the docs, computed by running inference on a one-node model.

An example in the YAML gives inputs as shapes with symbolic dims (``"(N, C, H, W)"``,
``"(N, 2*H)"``: what the dim reader reads; optionally with an element type: ``"int64 (2,)"``)
or as small integer values (``"[0, -1]"``, ``"int32 [1]"``, given as constant initializers),
plus attributes. The engine infers the node's outputs with the schemas being generated and
their rules, the tree's own included, so the docs show exactly what inference gives, and a
broken example, or a rule failing on one, stops generation with an error located at it.
"""
from __future__ import annotations

import importlib
import itertools
import re
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from opspec.codegen.compiler import CompiledDomain, CompiledOp
from opspec.codegen.diagnostics import CompileError, Diagnostic, Diagnostics
from opspec.codegen.history import format_value
from opspec.codegen.model import ExampleDecl
from opspec.codegen.parallel import forked_map
from opspec.runtime.registry import Registry
from opspec.runtime.schema import AttrType, OpSchema
from opspec.runtime.shape.parse import is_name, parse_dim
from opspec.runtime.shape.render import format_shape
from opspec.runtime.shape.sym import Sym
from opspec.runtime.contract.elements import ELEMENT_NAMES, ELEMENT_TYPES, ElementType

if TYPE_CHECKING:
    from opspec.runtime.op_set import OpSet
    from opspec.runtime.rulebook import RuleBook

_SHAPE = re.compile(r"^(?:(\w+)\s+)?\((.*)\)$")
_VALUES = re.compile(r"^(?:(\w+)\s+)?\[(.*)\]$")
_PREFERRED = ("float", "int64")
_IR_VERSION = 10


class ExampleProblem(ValueError):
    """An example that cannot be built or whose node inference rejects."""


@dataclass(frozen=True)
class Example:
    """One worked example: the call as text and each output's inferred type."""

    version: int
    call: str
    outputs: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        """``Conv(X: float (N, C, H, W), ...) → Y: float (N, M, H - 2, W - 2)``."""
        return f"{self.call} → {', '.join(f'{name}: {value}' for name, value in self.outputs)}"


def examples_of(domains: tuple[CompiledDomain, ...], fresh: bool = True) -> dict[tuple[str, str], list[Example]]:
    """Every op's examples by (domain, op), newest version first.

    With ``fresh``, inference looks schemas up in ``domains`` instead of the installed
    registry, so the examples of a tree being generated use that tree. Raises
    :class:`CompileError` listing every example that fails.
    """
    diagnostics = Diagnostics()
    found: dict[tuple[str, str], list[Example]] = {}
    wanted = [(domain, op) for domain in domains for op in domain.ops if _has_examples(op)]
    worked = worked_examples(domains, fresh)
    if not wanted or not worked.ready:
        return found
    computed = forked_map(worked.attempt, wanted)  # the registry is set up before any fork
    for (domain, op), (examples, problems) in zip(wanted, computed):
        found[domain.decl.name, op.decl.name] = examples
        for problem in problems:
            diagnostics.error(problem.location, problem.message)
    if diagnostics:
        raise CompileError(diagnostics.sorted())
    return found


@dataclass(frozen=True)
class WorkedExamples:
    """The worked examples of a tree's ops, each op's computed when asked for (in whichever process
    renders its page), inference looking schemas up in ``registry`` (None: the installed one) and
    running the rules of ``rules``."""

    ready: bool
    registry: Registry | None = None
    #: The rules inference runs: the built-in ones and the tree's own (None: the installed ones).
    rules: RuleBook | None = None

    def of(self, domain: CompiledDomain, op: CompiledOp) -> list[Example]:
        """``op``'s examples, newest version first; :class:`CompileError` lists every one that fails."""
        examples, problems = self.attempt((domain, op))
        if problems:
            raise CompileError(problems)
        return examples

    def attempt(self, wanted: tuple[CompiledDomain, CompiledOp]) -> tuple[list[Example], list[Diagnostic]]:
        """An op's examples, and the problems of those that fail (none at all without a runtime)."""
        if not self.ready or not _has_examples(wanted[1]):
            return [], []
        return _examples_with_problems(wanted, self.op_set())

    def op_set(self) -> OpSet:
        """The op set inference answers from: ``registry`` and ``rules`` where given, the installed
        op set's otherwise."""
        from opspec.runtime.op_set import OpSet, installed_op_set

        installed = installed_op_set()
        if self.registry is None and self.rules is None:
            return installed
        return OpSet(self.registry or installed.registry, self.rules or installed.rules, installed.implied_domains)


def worked_examples(domains: tuple[CompiledDomain, ...], fresh: bool = True) -> WorkedExamples:
    """The worked examples of ``domains`` (see :class:`WorkedExamples`); with ``fresh``, inference
    looks schemas up in ``domains`` instead of the installed registry. Whatever every process needs
    to compute them is set up here, once, before any fork."""
    if not any(_has_examples(op) for domain in domains for op in domain.ops) or not runtime_ready():
        return WorkedExamples(False)
    from opspec.runtime.op_set import installed_op_set

    installed_op_set()  # built here, once, rather than in each process that runs an example
    if not fresh:
        return WorkedExamples(True)
    return WorkedExamples(True, _registry_of(domains), _tree_rules(domains))


def _tree_rules(domains: tuple[CompiledDomain, ...]) -> RuleBook | None:
    """The built-in rules and the tree's own, when an example runs one of its own (only then is
    the tree's code run); else None."""
    catalogue = next((domain.catalogue for domain in domains if domain.catalogue.modules), None)
    if catalogue is None:
        return None
    own = {name for name, declared in catalogue.rules.items() if not declared.builtin}
    if not any(schema.inference is not None and schema.inference.name in own
               for domain in domains for op in domain.ops if _has_examples(op) for schema in op.schemas):
        return None
    from opspec.codegen.tree_rules import tree_rule_book

    return tree_rule_book(catalogue.folder, catalogue.modules)


def _has_examples(op: CompiledOp) -> bool:
    return any(version.examples for version in op.decl.versions)


def runtime_ready() -> bool:
    """Whether inference can run: the built-in registry and the IR module are importable.

    They are generated files, so the first generation into an empty ``generated/`` has no
    runtime yet: its docs go without examples, and :func:`opspec.codegen.generate.generate`
    renders them once more after writing.
    """
    from opspec.runtime.registry import SchemaError

    importlib.invalidate_caches()
    try:
        importlib.import_module("opspec.generated.opspec_ir_pb2")
        importlib.import_module("opspec.runtime.inference.graph")
    except (ImportError, SchemaError):
        return False
    return True


def _examples_with_problems(wanted: tuple[CompiledDomain, CompiledOp],
                            op_set: OpSet) -> tuple[list[Example], list[Diagnostic]]:
    """An op's examples inferred with ``op_set``, and the problems of those that fail."""
    problems = Diagnostics()
    return _op_examples(*wanted, problems, op_set), problems.items


def _op_examples(domain: CompiledDomain, op: CompiledOp, diagnostics: Diagnostics, op_set: OpSet) -> list[Example]:
    results = []
    for schema, version in zip(op.schemas, op.decl.versions):
        for example in version.examples:
            try:
                results.append(run_example(schema, domain.decl.node_domain, example, op_set))
            except ExampleProblem as problem:
                diagnostics.error(example.location, f"example for {op.decl.name} version {schema.since_version}: "
                                                    f"{problem}")
            except Exception as error:  # noqa: BLE001 - a rule's bug let through (as tests ask): still this example's
                diagnostics.error(example.location, f"example for {op.decl.name} version {schema.since_version}: "
                                                    f"inference failed ({type(error).__name__}: {error})")
    return sorted(results, key=lambda example: -example.version)


def run_example(schema: OpSchema, node_domain: str, example: ExampleDecl, op_set: OpSet | None = None) -> Example:
    """Infer one example's outputs, looking operators up in ``op_set`` (None: the installed one)."""
    from opspec.runtime.inference.graph import infer_model
    from opspec.runtime.inference.options import InferenceOptions
    from opspec.runtime.inference.typeops import describe

    model, call = _model(schema, node_domain, example)
    outcome = infer_model(model, InferenceOptions(check_type=True, data_prop=True, report=False), op_set=op_set)
    if outcome.errors:
        raise ExampleProblem("; ".join(error.message for error in outcome.errors))
    if outcome.unknown:
        raise ExampleProblem("; ".join(outcome.unknown.values()))
    outputs = tuple((name, _readable(describe(outcome.types.get(name))))
                    for name in _output_names(schema, example.outputs))
    return Example(schema.since_version, call, outputs)


def _output_names(schema: OpSchema, count: int | None) -> list[str]:
    """The node's output names: the formal names, numbered along a variadic last output."""
    count = count or max(schema.min_output, 1)
    variadic = bool(schema.outputs) and schema.outputs[-1].option.name == "Variadic"
    fixed = [param.name for param in (schema.outputs[:-1] if variadic else schema.outputs)]
    if count <= len(fixed):
        return fixed[:count]
    if not variadic:
        raise ExampleProblem(f"{schema.name} has at most {len(fixed)} outputs")
    return fixed + [f"{schema.outputs[-1].name}_{index}" for index in range(count - len(fixed))]


def _readable(text: str) -> str:
    """``tensor(float) (N, 3)`` -> ``float (N, 3)``."""
    match = re.match(r"^tensor\((\w+)\) (.*)$", text)
    return f"{match.group(1)} {match.group(2)}" if match else text


def _model(schema: OpSchema, node_domain: str, example: ExampleDecl) -> tuple[Any, str]:
    from opspec.generated.opspec_ir_pb2 import ModelProto

    model = ModelProto(ir_version=_IR_VERSION)
    model.opset_import.add(domain=node_domain, version=schema.since_version)
    graph = model.graph
    graph.name = "example"
    node = graph.node.add(op_type=schema.name, domain=node_domain, name="example")
    formal = {param.name: param for param in schema.inputs}
    unknown = sorted(set(example.inputs) - set(formal))
    if unknown:
        raise ExampleProblem(f"no input named {', '.join(unknown)} (inputs: {', '.join(formal) or 'none'})")
    last = max([index for index, param in enumerate(schema.inputs) if param.name in example.inputs], default=-1)
    words = []
    for param in schema.inputs[:last + 1]:
        text = example.inputs.get(param.name, "")
        if not text:
            node.input.append("")
            continue
        parts = [part for part in text.split(";")] if param.option.name == "Variadic" else [text]
        shown = []
        for position, part in enumerate(parts):
            name = param.name if len(parts) == 1 else f"{param.name}_{position}"
            node.input.append(name)
            shown.append(_add_input(graph, name, param, part))
        words.append(f"{param.name}: {'; '.join(shown)}")
    for name in _output_names(schema, example.outputs):
        node.output.append(name)
        graph.output.add(name=name)
    for name, value in example.attributes.items():
        spec = schema.attributes.get(name)
        if spec is None:
            raise ExampleProblem(f"no attribute named {name}")
        _set_attribute(node.attribute.add(name=name, type=int(spec.type)), spec.type, value)
        words.append(f"{name}={format_value(value, bare_words=True)}")
    return model, f"{schema.name}({', '.join(words)})"


def _elem(name: str | None, param: Any) -> int:
    if name is not None:
        if name not in ELEMENT_TYPES:
            raise ExampleProblem(f"unknown element type {name!r}")
        return ELEMENT_TYPES[name]
    allowed = [t[len("tensor("):-1] for t in sorted(param.types) if t.startswith("tensor(")]
    for preferred in _PREFERRED:
        if preferred in allowed:
            return ELEMENT_TYPES[preferred]
    if not allowed:
        raise ExampleProblem(f"input {param.name} takes no tensors; give its type")
    return ELEMENT_TYPES[allowed[0]]


def _add_input(graph: Any, name: str, param: Any, text: str) -> str:
    """Declare one example input in ``graph``; return how the example shows it."""
    text = text.strip()
    shape, values = _SHAPE.match(text), _VALUES.match(text)
    if values:
        elem = _elem(values.group(1) or "int64", param)
        if ELEMENT_NAMES[elem] not in ("int32", "int64"):
            raise ExampleProblem(f"input {param.name}: values are int32 or int64, not {ELEMENT_NAMES[elem]}")
        try:
            numbers = [int(item) for item in values.group(2).split(",") if item.strip()]
        except ValueError:
            raise ExampleProblem(f"input {param.name}: values must be integers, got {text!r}") from None
        tensor = graph.initializer.add(name=name, data_type=elem, dims=[len(numbers)])
        if elem == ElementType.INT64:
            tensor.int64_data.extend(numbers)
        else:
            tensor.int32_data.extend(numbers)
        return f"{ELEMENT_NAMES[elem]} {format_value(numbers)}"
    if not shape:
        raise ExampleProblem(f"input {param.name}: write a shape such as '(N, 3)' or values such as '[0, -1]', "
                             f"not {text!r}")
    elem = _elem(shape.group(1), param)
    dims = [_dim(param.name, dim) for dim in _top_level_items(shape.group(2))]
    value_info = graph.input.add(name=name)
    tensor_type = value_info.type.tensor_type
    tensor_type.elem_type = elem
    tensor_type.shape.SetInParent()
    for dim in dims:
        entry = tensor_type.shape.dim.add()
        if isinstance(dim, int):
            entry.dim_value = dim
        elif dim is not None:
            entry.dim_param = str(dim)
    return f"{ELEMENT_NAMES[elem]} {format_shape(tuple(dims))}"


def _top_level_items(text: str) -> list[str]:
    """The comma-separated items of ``text``, commas inside parentheses not counting (``min(H, W), 3``)."""
    items, depth, start = [], 0, 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:position])
            start = position + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _dim(input_name: str, text: str) -> int | Sym | None:
    """One example dim: a number, a name, ``?``, or an expression the dim reader reads (``2*H``,
    ``floor((H - 1)/2) + 1``); anything else is an :class:`ExampleProblem`."""
    if text == "?":
        return None
    value = parse_dim(text)
    if isinstance(value, Sym) and value.is_symbol and not is_name(text):  # text outside the grammar
        value = None
    if value is None:
        raise ExampleProblem(f"input {input_name}: a dim is a number, a name, '?' or an expression such as "
                             f"'2*H' or 'floor((H - 1)/2) + 1', not {text!r}")
    return value


def _set_attribute(attribute: Any, kind: AttrType, value: Any) -> None:
    try:
        if kind == AttrType.INT:
            attribute.i = int(value)
        elif kind == AttrType.FLOAT:
            attribute.f = float(value)
        elif kind == AttrType.STRING:
            attribute.s = str(value).encode("utf-8")
        elif kind == AttrType.INTS:
            attribute.ints.extend(int(item) for item in value)
        elif kind == AttrType.FLOATS:
            attribute.floats.extend(float(item) for item in value)
        elif kind == AttrType.STRINGS:
            attribute.strings.extend(str(item).encode("utf-8") for item in value)
        else:
            raise ExampleProblem(f"attribute {attribute.name}: {kind.spelling} values are not supported in examples")
    except (TypeError, ValueError):
        raise ExampleProblem(f"attribute {attribute.name} must be {kind.spelling}, got {value!r}") from None


#: Numbers the registry indexes made in this process (each gets a name of its own).
_PACKAGES = itertools.count()


def _registry_of(domains: tuple[CompiledDomain, ...]) -> Registry:
    """A registry answering from ``domains`` (and, for a layered op set, the installed standard
    domains it extends): an index as a generated package has, with the compiled schemas given
    beside it (nothing is imported for them)."""
    from opspec.runtime import defs

    index = ModuleType(f"_opspec_examples_index{next(_PACKAGES)}")
    entries = tuple({"name": d.decl.name, "node_domain": d.decl.node_domain, "aliases": d.decl.aliases,
                     "opset_min": d.decl.opset_min, "opset_max": d.decl.opset_max, "extends": d.decl.extends}
                    for d in domains)
    operators: dict[str, dict[str, tuple[str, tuple[int, ...]]]] = {}
    vars(index).update(DOMAINS=entries, OPS=operators)  # the names a generated index module defines
    schemas = {}
    for position, domain in enumerate(domains):
        ops = operators[domain.decl.name] = {}
        for number, op in enumerate(domain.ops):
            module = f"d{position}_{number}"
            ops[op.decl.name] = (module, op.versions)
            schemas[module] = op.schemas
    fresh = Registry()
    if any(d.decl.extends for d in domains):  # a layered op set: the standard domains it extends first
        fresh.add_package(defs.REGISTRY_PACKAGE)
    fresh.add_package(index, schemas)
    return fresh


__all__ = ["Example", "ExampleProblem", "WorkedExamples", "examples_of", "run_example", "worked_examples"]
