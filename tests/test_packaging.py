"""Packaging: the wheel and sdist build without warnings, and the dependency pins agree with pyproject."""
from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "LICENSE", "README.md", "Makefile",
            "opspec", "codegen", "runtime", "generated", "opdefs", "requirements", "tests", "benchmarks")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^;\s]+)")


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _floors_in_pyproject() -> dict[str, str]:
    found = {}
    for requirement in _project()["dependencies"]:
        match = re.match(r"([A-Za-z0-9_.-]+)>=([\d.]+)", requirement)
        assert match, requirement
        name, floor = match.groups()
        found[name.lower()] = floor
    return found


def _pins(path: Path) -> dict[str, list[str]]:
    pins: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        match = _PIN.match(line)
        if match:
            pins.setdefault(match.group(1).lower().replace("_", "-"), []).append(match.group(2))
    return pins


def test_every_runtime_dependency_has_a_floor_and_the_floor_file_pins_exactly_it():
    floors = _floors_in_pyproject()
    assert set(floors) == {"pyyaml", "jinja2", "jsonschema", "protobuf"}
    assert floors["protobuf"] == "4.25.8"  # onnxruntime's own floor
    assert {name: versions[0] for name, versions in _pins(REPO / "requirements/floors.txt").items()} == floors


def test_the_lock_pins_every_requirement_and_the_tools_within_their_ranges():
    pins = _pins(REPO / "requirements/lock.txt")
    project = _project()
    wanted = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    for requirement in wanted:
        match = re.match(r"([A-Za-z0-9_.-]+)\s*(==|>=)?\s*([\d.]*)", requirement)
        assert match, requirement
        name, operator, version = match.groups()
        locked = pins.get(name.lower().replace("_", "-"))
        assert locked, f"{name} is not in requirements/lock.txt: run `make lock`"
        parse = lambda text: tuple(int(part) for part in re.findall(r"\d+", text))  # noqa: E731
        for pinned in locked:
            if operator == "==":
                assert pinned == version, f"{name}: locked {pinned}, pyproject says =={version}"
            elif operator == ">=":
                assert parse(pinned) >= parse(version), f"{name}: locked {pinned} is below {version}"
    assert {"pip", "setuptools"} <= set(pins), "the installer and the build backend are locked too"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, str]:
    """A wheel and an sdist built from a copy of the sources, and what the build printed."""
    backend = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"][0]
    pytest.importorskip("setuptools", minversion=backend.split(">=")[1])  # the build backend pyproject asks for
    source = tmp_path_factory.mktemp("source")
    for name in _SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, source / name)
    dist = source / "dist"
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    built, printed = {}, ""
    for kind in ("wheel", "sdist"):  # one process each: setuptools keeps state between builds
        script = f"import sys, setuptools.build_meta as backend; print('BUILT', backend.build_{kind}(sys.argv[1]))"
        result = subprocess.run([sys.executable, "-W", "default", "-c", script, str(dist)], cwd=source,
                                capture_output=True, text=True, timeout=300, env=environment)
        assert result.returncode == 0, result.stderr[-3000:]
        reported = re.search(r"^BUILT (\S+)$", result.stdout, re.M)
        assert reported, result.stdout
        built[kind] = dist / reported.group(1)
        printed += result.stdout + result.stderr
    return built["wheel"], built["sdist"], printed


def test_the_build_prints_no_warning(built):
    _, _, printed = built
    assert not re.search(r"(?im)warning[:!]|deprecationwarning|^\s*!!", printed), printed[-3000:]


def test_the_wheel_carries_its_license_data_and_no_tests(built):
    wheel, _, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in metadata
    assert not any(n.startswith(("tests/", "opspec/tests/")) for n in names)
    for needed in ("opspec/codegen/templates/op.md.j2", "opspec/opdefs/schema/op.schema.json",
                   "opspec/opdefs/README.md", "opspec/opdefs/types.yaml", "opspec/opdefs/ai.onnx/math/Add.yaml",
                   "opspec/generated/docs/README.md", "opspec/generated/opspec_ir_pb2.py"):
        assert needed in names, needed


_USER_CODE = """\
import opspec
from opspec.generated.opspec_ir_pb2 import ModelProto

schema = opspec.get_schema("Add", 14)
reveal_type(schema.since_version)
reveal_type(schema.inputs[0].types)
reveal_type(ModelProto().graph.name)
version: str = schema.since_version
"""


def test_the_installed_wheel_is_typed_for_its_users(built, tmp_path):
    """A type checker reads the installed package's own types (py.typed, the IR stub) in user code."""
    api = pytest.importorskip("mypy.api")
    wheel, _, _ = built
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    python = tmp_path / "env" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)  # what pip installs from a pure-Python wheel
    (tmp_path / "mypy.ini").write_text("[mypy]\n")
    (tmp_path / "user.py").write_text(_USER_CODE)
    out, _, status = api.run(["--python-executable", str(python), "--config-file", str(tmp_path / "mypy.ini"),
                              "--no-incremental", "--follow-imports=silent", str(tmp_path / "user.py")])
    notes = re.findall(r'Revealed type is "(.*)"', out)
    assert notes == ["int", "frozenset[str]", "str"], out
    assert status == 1 and out.count("error:") == 1 and 'variable has type "str"' in out, out


def test_every_link_in_the_wheels_docs_resolves_inside_the_wheel(built):
    wheel, _, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        broken = []
        for name in sorted(n for n in names if n.endswith(".md")):
            for target in _LINK.findall(archive.read(name).decode("utf-8")):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target.split("#")[0]))
                if resolved not in names and not any(n.startswith(resolved + "/") for n in names):
                    broken.append(f"{name} -> {target}")
    assert not broken, broken[:10]


def test_the_sdist_builds_the_wheel_and_ships_no_tests(built):
    _, sdist, _ = built
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "pyproject.toml", "setup.py", "requirements/lock.txt", "runtime/ir/opspec_ir.proto",
            "opdefs/types.yaml", "generated/opspec_ir_pb2.py"} <= names
    assert not any(name.startswith(("tests/", "benchmarks/")) for name in names)


def _readme_walkthrough() -> list[str]:
    """The commands of the README's walk-through from `pip install` to a tested op set."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("From `pip install` to a generated, tested op set of your own", 1)[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_walkthrough_goes_from_the_wheel_to_a_tested_op_set_in_five_commands(built, tmp_path):
    wheel, _, _ = built
    commands = _readme_walkthrough()
    assert len(commands) == 5 and commands[0].startswith("pip install opspec-")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    environment = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))},
                   "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(venv),
                   "PIP_CONSTRAINT": str(REPO / "requirements/lock.txt"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    work = tmp_path / "work"
    work.mkdir()
    for command in commands:
        command = re.sub(r"opspec-\S+\.whl", str(wheel), command)
        done = subprocess.run(command, shell=True, cwd=work, env=environment, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "passed" in done.stdout and "failed" not in done.stdout
    located = subprocess.run([str(venv / "bin/python"), "-c", "import opspec; print(opspec.__file__)"], cwd=work,
                             capture_output=True, text=True, env=environment)
    assert str(venv) in located.stdout  # the wheel's opspec ran, not the source tree's
    ops = {p.stem for p in (work / "my_ops/opdefs/com.example").rglob("*.yaml")} - {"domain"}
    assert ops == {"TileLastAxis", "MyGelu"}
    for path in (work / "my_ops/opdefs").rglob("*.yaml"):  # modelines reach the tree's own copy of the schemas
        schema = path.read_text().splitlines()[0].partition("$schema=")[2]
        assert (path.parent / schema).resolve().is_file()
        assert (path.parent / schema).resolve().parent == (work / "my_ops/opdefs/schema").resolve()
    assert (work / "my_ops/build/com_example/docs/com.example/MyGelu.md").is_file()


#: Runs ``opspec`` with onnx made unimportable, as in an environment that never installed it.
_WITHOUT_ONNX = "import sys; sys.modules['onnx'] = None; from opspec.cli import main; sys.exit(main(sys.argv[1:]))"


def _small_model(path: Path) -> None:
    """An Add model written with opspec's own IR classes: no onnx needed."""
    from opspec.generated.opspec_ir_pb2 import ModelProto

    model = ModelProto(ir_version=8)
    model.opset_import.add(domain="", version=17)
    graph = model.graph
    graph.name = "g"
    graph.node.add(op_type="Add", input=["a", "b"], output=["y"], name="add")
    for info, name in ((graph.input.add(), "a"), (graph.input.add(), "b"), (graph.output.add(), "y")):
        info.name = name
        info.type.tensor_type.elem_type = 1
        for dim in (2, 3):
            info.type.tensor_type.shape.dim.add(dim_value=dim)
    path.write_bytes(model.SerializeToString())


def test_without_onnx_every_command_but_import_works(tmp_path):
    model = tmp_path / "add.onnx"
    _small_model(model)
    commands = [["--version"], ["show", "Add"], ["check", str(model)], ["infer", str(model), "--quiet"],
                ["convert", str(model), "--opset", "13", "-o", str(tmp_path / "add13.onnx")],
                ["init", "--domain", "com.example", str(tmp_path / "tree")], ["schema-path", "op"],
                ["generate", "--opdefs", str(REPO / "examples/custom_ops/opdefs"), "--out", str(tmp_path / "ops")]]
    for command in commands:
        done = subprocess.run([sys.executable, "-c", _WITHOUT_ONNX, *command], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
        assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
    done = subprocess.run([sys.executable, "-c", _WITHOUT_ONNX, "import", "--ops", "Relu", "--out",
                           str(tmp_path / "drafts")], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "opspec: `opspec import` reads onnx.defs: this needs the onnx "
                                                 "package: pip install 'onnx>=1.17'\n")


def test_make_wheel_builds_it_and_no_scratch_folder_hides_the_build_package(built):
    """`make wheel` from a fresh copy (the venv taken as made); afterwards no folder the builds
    left in the checkout has a name Python could import, so ``python -m build`` run there finds
    the installed package, or says it is not installed, never "'build' is a package"."""
    wheel, _, _ = built
    source = wheel.parent.parent
    bin_folder = Path(sys.executable).parent
    done = subprocess.run(["make", "-o", ".venv/.installed", "wheel", f"BIN={bin_folder}"], cwd=source,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [p.name for p in (source / "dist").glob("opspec-*.whl")] == [wheel.name]
    left = {p.name for p in source.iterdir() if p.is_dir()} - set(_SOURCES) - {"dist"}  # dist: the wheel's home
    assert left and not {name for name in left if name.isidentifier()}, left
    found = subprocess.run([sys.executable, "-c", "import importlib.util as u; s = u.find_spec('build'); "
                            "print(s and list(s.submodule_search_locations or [s.origin]))"],
                           cwd=source, capture_output=True, text=True, check=True).stdout
    assert str(source) not in found, found
