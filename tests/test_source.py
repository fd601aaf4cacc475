"""Reading an op file: its bytes are read whole up to the size limit, and no further."""
from __future__ import annotations

import os

import pytest

from opspec.codegen import source
from opspec.codegen.source import SourceError, load_yaml


def test_a_file_is_read_whole_and_its_locations_kept(tmp_path):
    path = tmp_path / "Op.yaml"
    path.write_text("op: Op\ndocs:\n  X: " + "word " * 20_000 + "\n", encoding="utf-8")
    document = load_yaml(path, "Op.yaml")
    assert document["docs"]["X"] == ("word " * 20_000).strip()
    assert str(document["docs"].key_at("X")) == "Op.yaml:3:3"


@pytest.mark.parametrize("extra, refused", [(0, False), (1, True), (5000, True)])
def test_the_size_limit_is_exact(tmp_path, monkeypatch, extra, refused):
    monkeypatch.setattr(source, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "Op.yaml"
    text = "op: Op\ndoc: " + "x" * (1000 - len("op: Op\ndoc: ") - 1 + extra) + "\n"
    path.write_text(text, encoding="utf-8")
    assert os.path.getsize(path) == 1000 + extra
    if refused:
        with pytest.raises(SourceError, match="larger than 1000 bytes"):
            load_yaml(path, "Op.yaml")
    else:
        assert load_yaml(path, "Op.yaml")["op"] == "Op"


def test_a_file_longer_than_measured_is_read_to_its_end(tmp_path):
    path = tmp_path / "grown.yaml"
    path.write_bytes(b"a" * 200_000)
    descriptor = os.open(path, os.O_RDONLY)
    try:  # the size measured before the file grew: the rest is read in pieces
        assert source._read_up_to(descriptor, 300_000, 10) == b"a" * 200_000
    finally:
        os.close(descriptor)
    descriptor = os.open(path, os.O_RDONLY)
    try:
        assert len(source._read_up_to(descriptor, 150_001, 10)) == 150_001
    finally:
        os.close(descriptor)
