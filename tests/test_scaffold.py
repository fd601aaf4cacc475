"""`opspec init`, `opspec new-op`, `opspec schema-path`: a new tree that generates and passes its
tests at once, and nothing a person wrote replaced."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opspec.cli import main
from opspec.codegen.schema_paths import schema_folder
from opspec.codegen.scaffold import snake_case


def test_a_new_tree_generates_without_warnings_and_passes_its_tests(tmp_path, capsys):
    tree = tmp_path / "acme"
    assert main(["init", str(tree), "--domain", "com.acme"]) == 0
    assert main(["new-op", "FastGelu", "--tree", str(tree)]) == 0
    capsys.readouterr()
    assert main(["generate", "--opdefs", str(tree / "opdefs"), "--out", str(tree / "build/com_acme")]) == 0
    warnings = capsys.readouterr().err.splitlines()
    assert warnings and all("/FastGelu.yaml:" in line and "placeholder" in line for line in warnings)  # the stub's TODOs
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tree / "tests")],
                          cwd=tree, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "6 passed" in done.stdout, done.stdout[-3000:]
    assert (tree / "README.md").read_text().startswith("# com.acme\n")


def test_a_broken_rule_fails_the_trees_own_test(tmp_path):
    tree = tmp_path / "acme"
    assert main(["init", str(tree), "--domain", "com.acme"]) == 0
    rule = tree / "opdefs/rules/tile_last_axis.py"
    rule.write_text(rule.read_text().replace("mul_dim(shape[-1], repeats)", "shape[-1]"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tree / "tests")],
                          cwd=tree, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "test_the_last_axis_grows_by_the_repeat_count" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--domain", "com..bad"], "--domain 'com..bad': "),
    (["--domain", "com.ok"], "exists and is not an empty folder: nothing was written"),
])
def test_init_refuses_a_bad_domain_and_a_folder_in_use(tmp_path, capsys, args, message):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "notes.txt").write_text("mine")
    assert main(["init", str(tree), *args]) == 2
    assert message in capsys.readouterr().err
    assert [p.name for p in tree.iterdir()] == ["notes.txt"]


def test_new_op_refuses_a_bad_name_an_existing_op_and_an_unclear_domain(tmp_path, capsys):
    tree = tmp_path / "tree"
    assert main(["init", str(tree), "--domain", "com.acme"]) == 0
    capsys.readouterr()
    assert main(["new-op", "../Evil", "--tree", str(tree)]) == 2
    assert main(["new-op", "TileLastAxis", "--tree", str(tree)]) == 2
    assert "TileLastAxis.yaml exists: nothing was written" in capsys.readouterr().err
    test_file = tree / "tests/test_my_op.py"
    test_file.write_text("# mine\n")
    assert main(["new-op", "MyOp", "--tree", str(tree)]) == 2
    assert test_file.read_text() == "# mine\n" and not (tree / "opdefs/com.acme/ops/MyOp.yaml").exists()
    (tree / "opdefs/com.other").mkdir()
    (tree / "opdefs/com.other/domain.yaml").write_text("domain: com.other\nopset: {min: 1, max: 1}\n")
    capsys.readouterr()
    assert main(["new-op", "Other", "--tree", str(tree)]) == 2
    assert "has 2 domains (com.acme, com.other): pass --domain" in capsys.readouterr().err
    assert main(["new-op", "Other", "--tree", str(tree), "--domain", "com.other"]) == 0
    assert (tree / "opdefs/com.other/ops/Other.yaml").is_file()


def test_schema_path_prints_the_installed_schemas(capsys):
    assert main(["schema-path"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert folder == schema_folder() and {p.name for p in folder.glob("*.schema.json")} >= {"op.schema.json",
                                                                                             "domain.schema.json"}
    assert main(["schema-path", "op"]) == 0
    assert json.loads(Path(capsys.readouterr().out.strip()).read_text())["$schema"]


def test_scaffold_modelines_name_the_trees_own_copy_of_the_schemas(tmp_path):
    tree = tmp_path / "tree"
    assert main(["init", str(tree), "--domain", "com.acme"]) == 0
    assert main(["new-op", "MyOp", "--tree", str(tree)]) == 0
    moved = tmp_path / "moved"
    tree.rename(moved)  # a reference inside the tree holds wherever the tree goes
    for path in (moved / "opdefs").rglob("*.yaml"):
        first = path.read_text().splitlines()[0]
        kind = "domain" if path.name == "domain.yaml" else "op"
        assert first.startswith("# yaml-language-server: $schema=")
        reference = first.partition("$schema=")[2]
        assert not Path(reference).is_absolute() and "://" not in reference
        target = (path.parent / reference).resolve()
        assert target == (moved / "opdefs/schema" / f"{kind}.schema.json").resolve()
        assert target.read_bytes() == (schema_folder() / f"{kind}.schema.json").read_bytes()


def test_the_scaffolds_readme_links_only_to_what_is_there(tmp_path):
    tree = tmp_path / "tree"
    assert main(["init", str(tree), "--domain", "com.acme"]) == 0
    readme = (tree / "README.md").read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", readme) + re.findall(r"https?://\S+", readme)
    assert all(not re.match(r"^[a-z]+:", target) and (tree / target.partition("#")[0]).exists()
               for target in targets), targets


def test_an_error_in_the_tree_fails_its_tests_in_a_few_located_lines(tmp_path):
    tree = tmp_path / "acme"
    assert main(["init", str(tree), "--domain", "com.acme"]) == 0
    op = tree / "opdefs/com.acme/example/TileLastAxis.yaml"
    op.write_text(op.read_text().replace("versions:", "versions: ["))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tree / "tests")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    output = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 1 and len(output) < 8, "\n".join(output)
    assert any(line.startswith("acme/opdefs/com.acme/example/TileLastAxis.yaml:11:11: error: YAML syntax error")
               for line in output), "\n".join(output)


def test_snake_case():
    assert [snake_case(n) for n in ("MyOp", "FastGELU", "QLinearConv", "Relu")] == [
        "my_op", "fast_gelu", "q_linear_conv", "relu"]
