"""Map the repository's top-level folders into the single ``opspec`` package.

The folders keep short names on disk (``codegen/``, ``runtime/``, ...) while the
installed import paths are namespaced (``opspec.codegen``, ``opspec.runtime``, ...),
so nothing generic such as ``runtime`` is claimed in site-packages.
"""
from pathlib import Path

from setuptools import setup

ROOTS = {
    "opspec": "opspec",
    "opspec.codegen": "codegen",
    "opspec.runtime": "runtime",
    "opspec.generated": "generated",
    "opspec.opdefs": "opdefs",
}
#: Data files shipped in the wheel: templates, opdefs (YAML, JSON Schemas, the format guide), docs,
#: type stubs and the marker that says the package is typed.
DATA_SUFFIXES = (".j2", ".yaml", ".json", ".md", ".svg", ".pyi", ".typed")


def _layout() -> tuple[list[str], dict[str, list[str]]]:
    """Packages and their data files.

    A folder whose path is made of identifiers is a package (``opspec.opdefs.schema`` too,
    though it holds no code); a folder named otherwise (``ai.onnx``) cannot be imported, and
    its files are data of the nearest package above it.
    """
    packages, data = [], {}
    for package, root in ROOTS.items():
        for folder in sorted([Path(root), *(p for p in Path(root).rglob("*") if p.is_dir())]):
            relative = folder.relative_to(root).parts
            if "__pycache__" in relative or any(part.startswith(".") for part in relative):
                continue
            owner = list(relative)
            while owner and not all(part.isidentifier() for part in owner):
                owner.pop()
            name = ".".join((package, *owner))
            if len(owner) == len(relative) and (any(folder.glob("*.py")) or any(
                    f.suffix in DATA_SUFFIXES for f in folder.iterdir() if f.is_file())):
                packages.append(name)
            files = [f for f in folder.iterdir() if f.is_file() and f.suffix in DATA_SUFFIXES]
            if files:
                prefix = "/".join(relative[len(owner):])
                data.setdefault(name, []).extend(sorted({(f"{prefix}/" if prefix else "") + "*" + f.suffix
                                                          for f in files}))
    return packages, data


#: Where setuptools stages a build: under the repository's scratch folder, whose name (unlike
#: setuptools' default ``build/``) cannot be imported, so it never hides the ``build`` package
#: from ``python -m build`` run here.
BUILD_BASE = ".build/setuptools"

PACKAGES, DATA = _layout()
setup(packages=PACKAGES, package_dir=ROOTS, package_data=DATA, options={"build": {"build_base": BUILD_BASE}})
