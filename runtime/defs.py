"""The process-wide registry: the built-in operator sets plus any registered packages.

Mirrors ``onnx.defs``: ``get_schema``, ``has_schema`` (also as ``has``), ``get_all_schemas``,
``get_all_schemas_with_history``, ``get_function_ops``, ``schema_version_map``.
"""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from opspec.runtime.registry import DomainInfo, Registry, SchemaError

__all__ = [
    "AI_ONNX_PREVIEW_DOMAIN", "AI_ONNX_PREVIEW_TRAINING_DOMAIN", "ONNX_DOMAIN", "ONNX_ML_DOMAIN", "DomainInfo",
    "REGISTRY", "SchemaError", "domain_version_range", "get_all_schemas", "get_all_schemas_with_history",
    "get_function_ops", "get_schema", "has", "has_schema", "onnx_ml_opset_version", "onnx_opset_version",
    "register", "schema_version_map",
]

#: Domain names as onnx.defs spells them (models write the default domain as "").
ONNX_DOMAIN = ""
ONNX_ML_DOMAIN = "ai.onnx.ml"
AI_ONNX_PREVIEW_DOMAIN = "ai.onnx.preview"
AI_ONNX_PREVIEW_TRAINING_DOMAIN = "ai.onnx.preview.training"

#: The standard op set: onnx's four domains, exactly as ``onnx.defs`` has them, plus registered packages.
REGISTRY = Registry()
#: Registered with ``register``, in order: every registry built here gets them too.
_REGISTERED: list[ModuleType] = []
#: Registries built on demand (``INFERENCE``), by name.
_BUILT: dict[str, Registry] = {}


def _builtin(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except (ImportError, AttributeError) as error:  # a fresh clone before `make generate`
        raise SchemaError(f"the built-in registry {name} is missing or broken ({error}); run `make generate`") from None


REGISTRY.add_package(_builtin("opspec.generated"))


def _inference_registry() -> Registry:
    """The standard set, onnxruntime's op set on top of it, and every registered package."""
    registry = Registry()
    registry.add_package(REGISTRY_PACKAGE)
    registry.add_package(_builtin(ONNXRUNTIME_PACKAGE))
    for package in _REGISTERED:
        registry.add_package(package)
    return registry


#: The built-in packages: the standard set, and onnxruntime's (``opspec.onnxruntime``).
REGISTRY_PACKAGE = sys.modules["opspec.generated"]
ONNXRUNTIME_PACKAGE = "opspec.generated.onnxruntime"


#: Declared for static readers (mypy, mypyc); never bound, so ``__getattr__`` below builds it on first use.
INFERENCE: Registry


def __getattr__(name: str) -> Registry:
    """``INFERENCE``: what inference looks operators up in (built on first use)."""
    if name != "INFERENCE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    registry = _BUILT.get(name)
    if registry is None:
        registry = _BUILT[name] = _inference_registry()
    return registry

get_schema = REGISTRY.get_schema
has_schema = REGISTRY.has_schema
has = REGISTRY.has_schema  # onnx.defs spells it both ways
get_function_ops = REGISTRY.get_function_ops
get_all_schemas = REGISTRY.get_all_schemas
get_all_schemas_with_history = REGISTRY.get_all_schemas_with_history
schema_version_map = REGISTRY.schema_version_map
domain_version_range = REGISTRY.domain_version_range


def onnx_opset_version() -> int:
    """The newest opset of the default (ai.onnx) domain."""
    return REGISTRY.domain_version_range("")[1]


def onnx_ml_opset_version() -> int:
    """The newest opset of the ai.onnx.ml domain."""
    return REGISTRY.domain_version_range(ONNX_ML_DOMAIN)[1]


def register(package: ModuleType | str | os.PathLike) -> list[DomainInfo]:
    """Add a registry package made by ``opspec generate --out DIR``, with its own rules.

    ``package`` is the imported module, its import name, or the folder itself. A folder is
    loaded under a private module name (nothing is put on ``sys.path``, and the folder's
    own name never shadows another module). Registering the same package again changes
    nothing. Returns the domains it added.
    """
    if isinstance(package, os.PathLike) or (isinstance(package, str) and (os.sep in package or os.path.exists(package))):
        module = _load_folder(os.fspath(package))
    elif isinstance(package, str):
        module = importlib.import_module(package)
    else:
        module = package
    before = {info.name for info in REGISTRY.domains()}
    REGISTRY.add_package(module)
    if module not in _REGISTERED:
        _REGISTERED.append(module)
    for registry in _BUILT.values():
        registry.add_package(module)
    return [info for info in REGISTRY.domains() if info.name not in before]


#: The package under which registry folders are loaded.
_PRIVATE = "opspec._registries"


def _load_folder(path: str) -> ModuleType:
    """Import the registry package in folder ``path`` under a private name derived from its path."""
    import hashlib  # here, not at the top: it alone costs more than ``import opspec``
    import importlib.util
    folder = os.path.realpath(path)
    index = os.path.join(folder, "__init__.py")
    if not os.path.isdir(folder):
        raise SchemaError(f"no registry folder at {path}")
    if not os.path.isfile(index):
        raise SchemaError(f"{path} is not a generated registry package (it has no __init__.py)")
    name = f"{_PRIVATE}.r{hashlib.sha256(folder.encode()).hexdigest()[:16]}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    if _PRIVATE not in sys.modules:
        parent = ModuleType(_PRIVATE, "Registry packages loaded from folders by opspec.register.")
        parent.__path__ = []  # a package with no folder of its own
        sys.modules[_PRIVATE] = parent
    spec = importlib.util.spec_from_file_location(name, index, submodule_search_locations=[folder])
    if spec is None or spec.loader is None:
        raise SchemaError(f"{path} cannot be loaded as a registry package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        if not hasattr(module, "DOMAINS") or not hasattr(module, "OPS"):
            raise SchemaError(f"{path} is not a generated registry package (its index has no DOMAINS/OPS)")
    except BaseException:
        del sys.modules[name]
        raise
    return module
