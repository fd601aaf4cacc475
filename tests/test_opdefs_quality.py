"""House rules for the built-in opdefs: described everywhere, editor-validated, rules implemented."""
from __future__ import annotations

from pathlib import Path

import pytest

import opspec
import opspec.onnxruntime
from opspec.codegen.generate import REPO, build
from opspec.codegen.load import layered_trees

#: The built-in tree and every op set layered over it (onnxruntime's operators).
TREES = [REPO / "opdefs", *layered_trees(REPO / "opdefs")]
OP_FILES = sorted(path for tree in TREES for path in tree.glob("*/*/*.yaml"))


@pytest.fixture(scope="module")
def domains():
    built = build(REPO / "opdefs", with_protos=False)
    return [*built.domains, *(domain for layer in built.layers.values() for domain in layer)]


def test_every_yaml_file_names_its_json_schema():
    for path in sorted((REPO / "opdefs").rglob("*.yaml")) + sorted((REPO / "examples").rglob("*.yaml")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), path
        target = (path.parent / first.split("=", 1)[1]).resolve()
        assert target.is_file(), f"{path}: modeline points at missing {target}"


@pytest.mark.parametrize("path", OP_FILES, ids=lambda p: p.relative_to(REPO / "opdefs").as_posix())
def test_no_placeholders_left(path: Path):
    assert "TODO" not in path.read_text(encoding="utf-8")


def test_everything_is_described(domains):
    missing = []
    for domain in domains:
        for op in domain.ops:
            if not op.decl.summary or not op.decl.doc.strip():
                missing.append(f"{op.decl.name}: summary/doc")
            for schema in op.schemas:
                for param in schema.inputs + schema.outputs:
                    if not param.description:
                        missing.append(f"{op.decl.name}-{schema.since_version} {param.name}")
                missing += [f"{op.decl.name}-{schema.since_version} {a.name}"
                            for a in schema.attributes.values() if not a.description]
                missing += [f"{op.decl.name}-{schema.since_version} {t.type_param_str}"
                            for t in schema.type_constraints if not t.description]
    assert missing == []


def test_an_op_bound_to_a_rule_is_bound_in_every_version():
    schemas = opspec.onnxruntime.get_all_schemas_with_history()
    bound = {(s.domain, s.name) for s in schemas if s.inference}
    assert [f"{s.name}-{s.since_version}" for s in schemas if not s.inference and (s.domain, s.name) in bound] == []


def test_rule_declarations_read_from_source_match_the_runtime():
    """The compiler reads declarations without running them; the runtime collects the same."""
    from opspec.codegen.diagnostics import Diagnostics
    from opspec.codegen.rule_specs import read_catalogue
    from opspec.runtime.rulebook import RULES

    diagnostics = Diagnostics()
    read = {name: declared.spec for name, declared in read_catalogue(None, diagnostics).items()}
    assert not diagnostics
    assert read == RULES.specs()
    assert all(RULES.lookup(name) is not None for name in read)


def test_every_referenced_rule_is_declared():
    from opspec.runtime.rulebook import RULES

    referenced = {s.inference.name for s in opspec.onnxruntime.get_all_schemas_with_history() if s.inference is not None}
    assert referenced <= set(RULES.specs())
