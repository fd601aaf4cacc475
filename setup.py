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
#: Data files shipped in the wheel, by the package whose folder holds them. A folder
#: whose name is an identifier is a package of its own (``opspec.opdefs.schema``); the
#: op folders (``ai.onnx``) are not importable names and stay data of their parent.
DATA = {
    "opspec.codegen.templates": ["*.j2"],
    "opspec.generated.docs": ["*.md", "**/*.md"],
    "opspec.opdefs": ["README.md", "*.yaml", "**/*.yaml"],
    "opspec.opdefs.schema": ["*.json"],
}


def _packages() -> list[str]:
    """Every folder with an ``__init__.py``, and every data package named in DATA."""
    found = set(DATA)
    for package, folder in ROOTS.items():
        for init in Path(folder).rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((package, *relative)))
    return sorted(found)


setup(packages=_packages(), package_dir=ROOTS, package_data=DATA)
