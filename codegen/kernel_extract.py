"""Write onnxruntime's kernel registrations as a kernel table (``opdefs/onnxruntime/kernels/``).

The CPU table is read from the installed onnxruntime wheel
(``onnxruntime.capi.onnxruntime_pybind11_state.get_all_opkernel_def``), the only place it
is exact, with the schema versions it knows
(``get_all_operator_schema``); the newest IR version and opsets it loads are measured by loading tiny models. Registrations that differ in the types of one type parameter alone are merged
(the union is then exact); the output is sorted, so the same wheel always gives the same
file. ``onnxruntime`` is imported only when this runs (``make kernels``).
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

#: The modeline of a kernel table in the built-in tree's layout.
MODELINE = "# yaml-language-server: $schema=../../schema/kernels.schema.json"
#: How onnxruntime marks a version range without an end.
OPEN_END = 2147483647
#: The spelling of each provider in onnxruntime and in our tables.
PROVIDERS = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda", "DmlExecutionProvider": "dml"}


@dataclass(frozen=True)
class Registration:
    """One kernel: its op, domain, version range (``until`` None: open) and types per type parameter."""

    domain: str
    op: str
    since: int
    until: int | None
    types: tuple[tuple[str, tuple[str, ...]], ...]

    def key(self) -> tuple[Any, ...]:
        return (self.domain, self.op, self.since, self.until if self.until is not None else OPEN_END, self.types)


def merged(registrations: Iterable[Registration]) -> list[Registration]:
    """The registrations with those of one op and version range that differ only in one type
    parameter's types joined into one, until none can be; sorted."""
    groups: dict[tuple[str, str, int, int | None], set[tuple[tuple[str, tuple[str, ...]], ...]]] = {}
    for item in registrations:
        groups.setdefault((item.domain, item.op, item.since, item.until), set()).add(item.types)
    found: list[Registration] = []
    for (domain, op, since, until), combos in groups.items():
        found += [Registration(domain, op, since, until, types) for types in _joined(combos)]
    return sorted(found, key=Registration.key)


def _joined(combos: set[tuple[tuple[str, tuple[str, ...]], ...]]) -> list[tuple[tuple[str, tuple[str, ...]], ...]]:
    items = sorted(combos)
    changed = True
    while changed:
        changed = False
        for first in range(len(items)):
            for second in range(first + 1, len(items)):
                union = _union(items[first], items[second])
                if union is not None:
                    items = sorted({*items[:first], *items[first + 1:second], *items[second + 1:], union})
                    changed = True
                    break
            if changed:
                break
    return items


def _union(a: tuple[tuple[str, tuple[str, ...]], ...], b: tuple[tuple[str, tuple[str, ...]], ...]
           ) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """``a`` and ``b`` as one entry when they differ in at most one parameter's types (else None)."""
    if [name for name, _ in a] != [name for name, _ in b]:
        return None
    differing = [index for index, (left, right) in enumerate(zip(a, b)) if left[1] != right[1]]
    if len(differing) > 1:
        return None
    return tuple((name, tuple(sorted({*types, *b[index][1]}))) for index, (name, types) in enumerate(a))


def from_wheel() -> tuple[str, dict[str, list[Registration]]]:
    """The installed onnxruntime's version and its registrations by provider."""
    import onnxruntime
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    found: dict[str, list[Registration]] = {}
    for kernel in state.get_all_opkernel_def():
        since, until = kernel.version_range
        types = tuple(sorted((name, tuple(sorted(allowed))) for name, allowed in kernel.type_constraints.items()))
        provider = PROVIDERS.get(kernel.provider, kernel.provider)
        found.setdefault(provider, []).append(
            Registration(kernel.domain or "ai.onnx", kernel.op_name, since, None if until == OPEN_END else until, types))
    return onnxruntime.__version__, found


#: Domains whose newest loadable opset is measured (those onnxruntime does not know load at any version).
PROBED_DOMAINS = ("ai.onnx", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training", "com.microsoft",
                  "com.microsoft.nchwc", "com.ms.internal.nhwc")
#: The highest version tried when measuring limits.
PROBE_CEILING = 64


def _loads(ir_version: int, opsets: dict[str, int]) -> bool:
    """Whether onnxruntime loads a one-Identity model of ``ir_version`` importing ``opsets``."""
    import onnxruntime
    from onnx import TensorProto, helper

    node = helper.make_node("Identity", ["x"], ["y"])
    graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    imports = [helper.make_opsetid("" if domain == "ai.onnx" else domain, version) for domain, version in opsets.items()]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = ir_version
    try:
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any refusal is the answer
        return False
    return True


def measured_limits() -> tuple[int, dict[str, int]]:
    """The newest IR version and, per domain onnxruntime knows, the newest opset it loads."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)  # the probes' warnings about old opsets are expected
    ir_version = max(version for version in range(1, PROBE_CEILING) if _loads(version, {"ai.onnx": 13}))
    opsets: dict[str, int] = {}
    for domain in PROBED_DOMAINS:
        base = {"ai.onnx": 13} if domain != "ai.onnx" else {}
        if _loads(7, {**base, domain: PROBE_CEILING}):
            continue  # a domain onnxruntime does not know: any version loads while no node uses it
        opsets[domain] = max(version for version in range(1, PROBE_CEILING) if _loads(7, {**base, domain: version}))
    return ir_version, opsets


def known_schemas() -> dict[str, dict[str, list[int]]]:
    """Per domain and op, the schema versions the installed onnxruntime knows (deprecated ones too)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    found: dict[str, dict[str, set[int]]] = {}
    for schema in state.get_all_operator_schema():
        found.setdefault(schema.domain or "ai.onnx", {}).setdefault(schema.name, set()).add(schema.since_version)
    return {domain: {op: sorted(versions) for op, versions in sorted(ops.items())} for domain, ops in sorted(found.items())}


def table_text(provider: str, source: str, registrations: Iterable[Registration],
               limits: tuple[int, dict[str, int]] | None = None,
               schemas: dict[str, dict[str, list[int]]] | None = None) -> str:
    """A kernel table as YAML: the runtime's limits, then one kernel a line, in a fixed order."""
    lines = [MODELINE, f"provider: {provider}", f"source: {json.dumps(source)}"]
    if limits is not None:
        ir_version, opsets = limits
        lines += ["limits:", f"  ir_version: {ir_version}",
                  f"  opsets: {{{', '.join(f'{domain}: {version}' for domain, version in sorted(opsets.items()))}}}"]
    if schemas is not None:
        lines.append("schemas:")
        for domain, ops in schemas.items():
            lines.append(f"  {domain}:")
            lines += [f"    {op}: [{', '.join(map(str, versions))}]" for op, versions in ops.items()]
    lines.append("kernels:")
    for item in merged(registrations):
        types = ", ".join(f"{name}: [{', '.join(map(_flow_scalar, allowed))}]" for name, allowed in item.types)
        until = "null" if item.until is None else str(item.until)
        lines.append(f"- {{domain: {item.domain}, op: {item.op}, versions: [{item.since}, {until}], "
                     f"types: {{{types}}}}}")
    return "\n".join(lines) + "\n"


def _flow_scalar(text: str) -> str:
    """``text`` as a scalar inside a flow collection (quoted when it holds a comma)."""
    return json.dumps(text) if "," in text else text


#: The line after which a table holds what the registry does not say (refusals, built bodies), kept as
#: written when the table is extracted again.
KEPT_MARKER = "# Not in the registry: measured on the same release, kept when the table is extracted again."


def kept_sections(path: Path) -> str:
    """The part of an existing table from :data:`KEPT_MARKER` on (empty: none)."""
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    at = text.find(KEPT_MARKER)
    return text[at:] if at >= 0 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write onnxruntime's CPU kernel table from the installed wheel")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "opdefs" / "onnxruntime"
                                             / "kernels"), help="the kernel tables' folder")
    args = parser.parse_args(argv)
    version, providers = from_wheel()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    limits = measured_limits()
    for provider, registrations in sorted(providers.items()):
        text = table_text(provider, f"onnxruntime {version} wheel, get_all_opkernel_def()", registrations, limits,
                          known_schemas())
        text += kept_sections(out / f"{provider}.yaml")
        (out / f"{provider}.yaml").write_text(text, encoding="utf-8")
        print(f"wrote {out / f'{provider}.yaml'}: {len(merged(registrations))} kernels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
