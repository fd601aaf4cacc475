"""Models written by onnxruntime's tools: every value opspec states holds in onnxruntime's run.

Each model of ``ort_models.catalogue()`` is inferred by opspec and by onnx and onnxruntime's
symbolic shape inference; every node output is held against onnxruntime's CPU run at two
settings of the input symbols (``value_oracle``). opspec must state nothing a run contradicts,
report no node error, and know at least as many values as either peer. The full table, with
onnx-shape-inference too, is ``benchmarks/bench_ort_models.py``.
"""
from __future__ import annotations

import onnx
import pytest
from ort_models import catalogue
from peers import TEST_PEERS
from value_oracle import real_values, score

import opspec

pytest.importorskip("sympy")  # onnxruntime's transformer optimizer and symbolic inference need it
MODELS = catalogue()


def _symbols(model: onnx.ModelProto) -> set[str]:
    return {d.dim_param for value in model.graph.input for d in value.type.tensor_type.shape.dim if d.dim_param}


def _peers(model: onnx.ModelProto) -> dict[str, onnx.ModelProto]:
    found = {}
    for name, infer in TEST_PEERS.items():
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        try:
            found[name] = infer(copy)
        except Exception:  # noqa: BLE001 - a peer that gives up knows what the model declared
            found[name] = model
    return found


@pytest.mark.parametrize("name", list(MODELS))
def test_every_value_holds_in_onnxruntime_and_opspec_knows_at_least_as_much_as_its_peers(name):
    build, settings, feeds = MODELS[name]
    model = build()
    real = real_values(model, settings, feeds)
    result = opspec.infer(model, data_prop=True)
    assert result.errors == [] and result.unknown_ops == set()
    ours = score(result.model, real, _symbols(model), settings)
    assert ours.wrong_values == []
    for peer, inferred in _peers(model).items():
        theirs = score(inferred, real, _symbols(model), settings)
        assert ours.exact + ours.symbolic >= theirs.exact + theirs.symbolic, (peer, ours, theirs)


def test_com_microsoft_nodes_without_an_opset_import_are_inferred_and_reported():
    model = MODELS["transformer optimizer (SkipLayerNormalization)"][0]()
    assert "com.microsoft" not in {entry.domain for entry in model.opset_import}
    result = opspec.infer(model, data_prop=True)
    assert result.implied_opsets == {"com.microsoft": 1}
    assert result.unknown_ops == set()


def test_the_command_line_says_which_domains_were_used_without_an_import(tmp_path, capsys):
    import json

    from opspec.cli import main

    path = tmp_path / "optimized.onnx"
    onnx.save(MODELS["transformer optimizer (SkipLayerNormalization)"][0](), path)
    main(["infer", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["implied_opsets"] == [{"domain": "com.microsoft", "version": 1}]
    assert report["unknown_ops"] == []
    assert main(["check", str(path)]) == 1
    assert "domain 'com.microsoft' has no opset import" in capsys.readouterr().out
