"""Op modules and op pages as rendered: a module imports exactly the types it writes and evaluates to its
schemas; text from the YAML stays inside its literal, its table cell and its page section."""
from __future__ import annotations

import ast
import json

import pytest

from opspec.codegen.compiler import CompiledDomain, compile_tree
from opspec.codegen.generate import DEFAULT_OUT
from opspec.codegen.history import constraint_text
from opspec.codegen.memo import by_identity
from opspec.codegen.op_module import SCHEMA_NAMES, module_text
from opspec.codegen.render import render_package
from opspec.runtime.schema import ValueConstraint

from test_opdefs_errors import DOMAIN, FILE  # noqa: E402 - the test domain of the opdefs tests

#: Text that would end a Python literal, a Markdown table cell or a line if pasted as it is.
HOSTILE = 'Attribute | OpSchema ValueConstraint FunctionBody \'\'\' """ \\ \n| `x` |\n## Heading'
OP = f"""op: Foo
summary: A test op.
doc: {json.dumps(HOSTILE)}
versions:
  1:
    inputs:
      X: T
      Z: T?
    outputs:
      Y: T+
    attributes:
      axis: int >= 0 = 0
      mode: string in {{a, b}} = a
    types:
      T: [tensor(float), tensor(int64)]
    inference: elementwise
  2:
    types:
      T: [tensor(float), tensor(int64), tensor(double)]
docs:
  X: {json.dumps(HOSTILE)}
  Z: {json.dumps(HOSTILE)}
  Y: {json.dumps(HOSTILE)}
  axis: {json.dumps(HOSTILE)}
  mode: {json.dumps(HOSTILE)}
  T: {json.dumps(HOSTILE)}
"""


@pytest.fixture(scope="module")
def domain(tmp_path_factory: pytest.TempPathFactory) -> CompiledDomain:
    root = tmp_path_factory.mktemp("tree")
    for relative, text in {"opdefs/x.test/domain.yaml": DOMAIN, FILE: OP}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return compile_tree(root / "opdefs", warn=lambda diagnostic: None)[0]


def _imports_and_names(text: str) -> tuple[set[str], set[str]]:
    """The names a module imports from the schema module, and the names its code uses."""
    tree = ast.parse(text)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "opspec.runtime.schema" for alias in node.names}
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return imported, used


def test_every_generated_module_imports_exactly_the_schema_types_it_uses() -> None:
    modules = [path for path in DEFAULT_OUT.glob("*/*.py") if path.name != "__init__.py" and "rules" not in path.parts]
    assert len(modules) > 100
    for path in modules:
        imported, used = _imports_and_names(path.read_text(encoding="utf-8"))
        assert imported == used & set(SCHEMA_NAMES), path


def test_a_module_imports_only_the_types_it_writes_whatever_its_text_says(domain: CompiledDomain) -> None:
    op = domain.ops[0]
    text = module_text(op)
    imported, used = _imports_and_names(text)
    assert imported == used & set(SCHEMA_NAMES)
    assert {"ValueConstraint", "Attribute", "AttrType", "OpSchema"} <= imported  # written by value
    assert "FunctionBody" not in imported  # only named in the text
    namespace: dict[str, object] = {}
    exec(compile(text, "Foo.py", "exec"), namespace)  # noqa: S102 - the module is data: literals only
    assert namespace["SCHEMAS"] == op.schemas
    assert namespace["DOC"] == HOSTILE and str(namespace["__doc__"]).startswith("Foo (x.test): every version")


def _table_rows(page: str, heading: str) -> list[str]:
    """The body rows of the table under ``heading``."""
    lines = page.split(f"\n### {heading}\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return lines[2:]


def _cells(row: str) -> list[str]:
    """A row's cells, split at the pipes that are not escaped."""
    marked = row.replace("\\|", "\0")
    return [cell.strip().replace("\0", "\\|") for cell in marked.strip("|").split("|")]


def test_an_op_page_keeps_hostile_text_inside_its_cells_and_sections(domain: CompiledDomain) -> None:
    page = render_package((domain,), "opdefs/")["docs/x.test/Foo.md"]
    cell = "Attribute \\| OpSchema ValueConstraint FunctionBody ''' \"\"\" \\ \\| `x` \\| ## Heading"
    inputs = _table_rows(page, "Inputs")
    assert [_cells(row) for row in inputs] == [["`X`", "`T`", "single", "", cell], ["`Z`", "`T`", "optional", "", cell]]
    assert [_cells(row) for row in _table_rows(page, "Outputs")] == [["`Y`", "`T`", "variadic (at least 1)", "", cell]]
    assert [_cells(row) for row in _table_rows(page, "Attributes")] == [
        ["`axis`", "`int`", "`0`", ">= 0", cell], ["`mode`", "`string`", '`"a"`', 'in {"a", "b"}', cell]]
    assert [_cells(row)[0] for row in _table_rows(page, "Type constraints")] == ["`T`"]
    sections = [line for line in page.splitlines() if line.startswith("#")]
    assert sections == ["# Foo", "## Heading", "## Signature", "### Inputs", "### Outputs", "### Attributes",
                        "### Type constraints", "### Inference", "## Version history",
                        "### Version 2 (current) <kbd>compatible</kbd>", "### Version 1"]  # "## Heading" is the doc's own line, as the YAML wrote it
    assert "*Domain [x.test](README.md) · f · versions [1](#version-1), [2](#version-2) · " \
           "this page describes version 2*" in page
    assert "Rule `elementwise`: " in page and "- `T` also accepts `tensor(double)`." in page


def test_rendering_twice_gives_the_same_files(domain: CompiledDomain) -> None:
    assert render_package((domain,), "opdefs/") == render_package((domain,), "opdefs/")


def test_answers_kept_per_object_never_cross_to_an_equal_object_that_reads_differently() -> None:
    whole, decimal = ValueConstraint(minimum=1, allowed=(1, 2)), ValueConstraint(minimum=1.0, allowed=(1.0, 2.0))
    assert whole == decimal
    assert [constraint_text(whole), constraint_text(decimal), constraint_text(whole)] == [
        ">= 1 in {1, 2}", ">= 1.0 in {1.0, 2.0}", ">= 1 in {1, 2}"]
    calls: list[object] = []

    @by_identity(2)
    def seen(value: object) -> int:
        calls.append(value)
        return len(calls)

    one, other, third = [1], [1], [1]
    assert [seen(one), seen(one), seen(other), seen(third), seen(one)] == [1, 1, 2, 3, 4]  # at most 2 kept
