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
DATA = {
    "opspec.codegen": ["templates/*.j2"],
    "opspec.generated": ["**/*.md"],
    "opspec.opdefs": ["**/*.yaml", "schema/*.json"],
}


def _packages() -> list[str]:
    found = []
    for package, folder in ROOTS.items():
        for init in sorted(Path(folder).rglob("__init__.py")):
            relative = init.parent.relative_to(folder).parts
            found.append(".".join((package, *relative)))
    return found


setup(packages=_packages(), package_dir=ROOTS, package_data=DATA)
