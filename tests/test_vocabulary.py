"""A user's tree shares the built-in vocabulary: type sets and rules by name; a built-in
domain only by an explicit `extends: true`."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import opspec
from opspec.codegen.compiler import compile_tree
from opspec.codegen.diagnostics import CompileError
from opspec.codegen.generate import generate

OP = """\
op: {name}
summary: A vendor activation.
versions:
  {since}:
    inputs:
      X: T
    outputs:
      Y: T
    types:
      T: {types}
    inference: elementwise
docs:
  X: Input.
  Y: Output.
  T: Element types.
"""


def _tree(root: Path, domain: str = "com.vendor", types: str = "numeric_types_bf16", extends: str = "",
          opset: str = "{min: 1, max: 1}", since: int = 1, own_types: str | None = None) -> Path:
    folder = root / "opdefs" / domain
    (folder / "nn").mkdir(parents=True)
    (folder / "domain.yaml").write_text(f"domain: {domain}\nopset: {opset}\nsummary: A vendor set.\n{extends}")
    (folder / "nn" / "VendorAct.yaml").write_text(OP.format(name="VendorAct", since=since, types=types))
    if own_types is not None:
        (root / "opdefs" / "types.yaml").write_text(own_types)
    return root / "opdefs"


def test_a_users_tree_names_the_built_in_type_sets_and_rules(tmp_path):
    (domain,) = compile_tree(_tree(tmp_path))
    schema = domain.ops[0].latest
    builtin = opspec.get_schema("Add", 14).type_constraints[0].allowed_type_strs
    assert schema.type_constraints[0].allowed_type_strs == builtin
    assert schema.inference is not None and schema.inference.name == "elementwise"


def test_a_users_own_type_set_may_not_give_a_built_in_name_other_types(tmp_path):
    opdefs = _tree(tmp_path, own_types="type_sets:\n  float_types: [tensor(float)]\n  mine: [float_types]\n")
    with pytest.raises(CompileError) as caught:
        compile_tree(opdefs)
    (problem,) = caught.value.diagnostics
    assert str(problem).startswith("opdefs/types.yaml:2:3: error: type set 'float_types' is already defined at ")
    same = _tree(tmp_path / "copy", types="mine", own_types="type_sets:\n  float_types: [tensor(float16), "
                 "tensor(float), tensor(double)]\n  mine: [float_types, tensor(int8)]\n")
    (domain,) = compile_tree(same)
    assert domain.ops[0].latest.type_constraints[0].allowed_type_strs[-1] == "tensor(int8)"


def _register(out: Path, code: str) -> subprocess.CompletedProcess:
    script = f"import opspec\nopspec.register({str(out)!r})\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_a_built_in_domain_is_extended_only_by_an_explicit_choice(tmp_path):
    silent = tmp_path / "silent"
    generate(_tree(silent, "ai.onnx", opset="{min: 1, max: 28}", since=20), silent / "out")
    refused = _register(silent / "out", "")
    assert refused.returncode != 0 and "already registered" in refused.stderr and "extends: true" in refused.stderr

    explicit = tmp_path / "explicit"
    generate(_tree(explicit, "ai.onnx", opset="{min: 1, max: 28}", since=20, extends='node_domain: ""\nextends: true\n'),
             explicit / "out")
    used = _register(explicit / "out", """
        print(opspec.get_schema("VendorAct", 21).since_version, opspec.get_schema("Relu", 14).since_version)""")
    assert used.returncode == 0, used.stderr
    assert used.stdout.split() == ["20", "14"]


@pytest.mark.parametrize("domain, opset, message", [
    ("ai.onnx", "{min: 1, max: 99}", "domain 'ai.onnx' extends opdefs/ai.onnx/domain.yaml: it must use its name "
                                     "'ai.onnx', its node domain and stay within opsets 1-28"),
    ("com.nowhere", "{min: 1, max: 1}", "domain 'com.nowhere' extends a domain that the built-in op set does not "
                                        "define"),
])
def test_an_extension_must_fit_its_built_in_domain(tmp_path, domain, opset, message):
    opdefs = _tree(tmp_path, domain, opset=opset, extends="extends: true\n")
    with pytest.raises(CompileError) as caught:
        generate(opdefs, tmp_path / "out")
    assert [d.message for d in caught.value.diagnostics] == [message]
