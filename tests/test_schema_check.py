"""The compiled yes/no schema check never passes a document the full JSON Schema validator
refuses, and passes every valid file of the built-in tree (else it would save nothing)."""
from __future__ import annotations

import random
from pathlib import Path

import jsonschema
import pytest

from opspec.codegen.kernel_tables import KERNELS_FOLDER
from opspec.codegen.schema_check import UnsupportedSchema, compile_check
from opspec.codegen.source import SourceError, parse_yaml
from opspec.codegen.validate import _plain, _quick_check, _validator
from test_fuzz_opdefs import _mutate_text

REPO = Path(__file__).resolve().parent.parent
OPDEFS = REPO / "opdefs"


def _kind(path: Path) -> str:
    return {"domain.yaml": "domain", "types.yaml": "types", "layer.yaml": "layer"}.get(path.name, "op")


def test_every_built_in_file_passes_the_quick_check():
    # Kernel tables have a schema of their own, held by tests/test_kernel_tables.py.
    files = [path for path in OPDEFS.rglob("*.yaml") if path.parent.name != KERNELS_FOLDER]
    assert len(files) > 100
    for path in files:
        document = _plain(parse_yaml(path.read_text(encoding="utf-8"), path.name))
        check = _quick_check(_kind(path))
        assert check is not None and check(document), path


def test_the_quick_check_never_passes_what_the_validator_refuses():
    rng = random.Random(7)
    sources = [OPDEFS / "ai.onnx/math/Clip.yaml", OPDEFS / "ai.onnx/tensor/Split.yaml",
               OPDEFS / "ai.onnx/domain.yaml", OPDEFS / "types.yaml"]
    refused = 0
    for _ in range(600):
        path = rng.choice(sources)
        text = _mutate_text(path.read_text(encoding="utf-8"), rng)
        try:
            located = parse_yaml(text if isinstance(text, str) else text.decode("utf-8", "replace"), "x")
        except SourceError:
            continue
        document = _plain(located)
        valid = _validator(_kind(path)).is_valid(document)
        refused += not valid
        quick = _quick_check(_kind(path))
        assert quick is not None and (not quick(document) or valid), text
        assert not quick(located) or valid, text  # the located document, keys as written
    assert refused > 50


@pytest.mark.parametrize("schema, good, bad", [
    ({"type": "integer"}, [1, -3], [True, 1.5, "1"]),
    ({"type": ["string", "null"]}, ["a", None], [1, []]),
    ({"enum": ["a", "b"]}, ["a"], ["c", 1]),
    ({"type": "object", "required": ["a"], "additionalProperties": False, "properties": {"a": {"minimum": 2}}},
     [{"a": 2}], [{}, {"a": 1}, {"a": 2, "b": 0}]),
    ({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 2}]}, ["a"], ["ab", 3]),
    ({"type": "array", "items": {"pattern": "^x"}, "minItems": 1}, [["x1"]], [[], ["y"]]),
    ({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "minProperties": 1}, [{"ab": 1}], [{}, {"A": 1}]),
    ({"oneOf": [{"type": "string"}, {"type": "null"}, {"$ref": "#/$defs/names"}],
      "$defs": {"names": {"type": "array", "items": {"type": "string"}, "minItems": 1}}},
     ["a", None, ["b"]], [1, [], [2], {}]),
    ({"type": "number", "minimum": 0, "maximum": 1}, [0, 0.5, 1], [-1, 1.5, True, "0"]),
])
def test_the_check_agrees_with_the_validator_on_each_keyword(schema, good, bad):
    check = compile_check(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in good:
        assert check(value) and validator.is_valid(value), value
    for value in bad:
        assert not check(value) and not validator.is_valid(value), value


def test_an_unknown_keyword_leaves_the_full_validator_alone():
    with pytest.raises(UnsupportedSchema):
        compile_check({"type": "object", "dependentRequired": {"a": ["b"]}})


def test_explaining_an_error_looks_its_key_up_without_a_scan():
    from opspec.codegen.source import Location, Map
    from opspec.codegen.validate import _walk

    class Counted(Map):
        scans = 0

        def __iter__(self):
            Counted.scans += 1
            return super().__iter__()

    where = Location("f.yaml", 1, 1)
    node = Counted()
    node.location, node.key_locations, node.value_locations, node.quoted = where, {}, {}, set()
    for i in range(1000):
        node[f"a{i}"] = i
        node.value_locations[f"a{i}"] = Location("f.yaml", i + 2, 3)
    node[7] = "seven"
    node.value_locations[7] = Location("f.yaml", 2000, 3)
    assert _walk(node, ["a999"]) == (999, Location("f.yaml", 1001, 3))
    assert _walk(node, ["7"]) == ("seven", Location("f.yaml", 2000, 3))
    assert Counted.scans == 0


def test_keys_are_checked_as_json_spells_them():
    check = compile_check({"type": "object", "propertyNames": {"pattern": "^[1-9][0-9]*$"},
                           "properties": {"2": {"type": "null"}}, "additionalProperties": {"type": "string"}})
    assert check({1: "a", "3": "b", 2: None})
    assert not check({0: "a"}) and not check({1: 2}) and not check({2: "a"})
