"""The Python API reference pages, written from the public names of a module: each function and
class with its signature and its docstring, each constant with its value."""
from __future__ import annotations

import inspect
import re
from types import ModuleType
from typing import Any, Callable

#: Docstring cross-references (``:func:`x```) and literals (````x````), as Markdown code.
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def api_page(title: str, module: ModuleType, names: list[str], intro: str = "") -> str:
    """A page for ``module``: its docstring, then a section per public name (functions and
    classes first, then constants), each with its signature and docstring."""
    values = [(name, getattr(module, name)) for name in names]
    callables = sorted([(name, value) for name, value in values if callable(value)],
                       key=lambda item: inspect.isclass(item[1]))  # functions first, then classes
    constants = [(name, value) for name, value in values if not callable(value)]
    lines = [f"# {title}", "", intro or markdown(inspect.getdoc(module) or ""), ""]
    for name, value in callables:
        lines += _entry(module.__name__, name, value)
    if constants:
        lines += ["## Constants", "", "| Name | Value |", "|---|---|"]
        lines += [f"| `{module.__name__}.{name}` | `{value!r}` |" for name, value in constants
                  if isinstance(value, (str, int, float))]
        lines += [f"| `{module.__name__}.{name}` | {_first_paragraph(value)} |" for name, value in constants
                  if not isinstance(value, (str, int, float))]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _entry(module: str, name: str, value: Any) -> list[str]:
    kind = "class" if inspect.isclass(value) else "function"
    shown = f"class {module}.{name}{_class_signature(value)}" if kind == "class" else f"{module}.{name}{signature(value)}"
    lines = [f"## {name} {{#{name}}}", "", "```python", shown, "```", "", markdown(inspect.getdoc(value) or "")]
    if kind == "class":
        methods = [(attribute, member) for attribute, member in vars(value).items()
                   if not attribute.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))]
        if methods:
            lines += ["", "| Member | What it is |", "|---|---|"]
            lines += [f"| `{attribute}{'' if isinstance(member, property) else signature(member)}` | "
                      f"{_first_paragraph(member)} |" for attribute, member in methods]
    return [*lines, ""]


def _class_signature(value: type) -> str:
    """A class's constructor parameters, or its bases when it takes what they take."""
    if "__init__" in vars(value) or hasattr(value, "__dataclass_fields__"):
        return signature(value).removesuffix(" -> None")
    bases = [base.__name__ for base in value.__bases__ if base is not object and not base.__name__.startswith("_")]
    return f"({', '.join(bases)})" if bases else ""


def signature(value: Callable[..., Any]) -> str:
    """``value``'s parameters as its source writes them (annotations as written, not evaluated)."""
    try:
        found = inspect.signature(value)
    except (TypeError, ValueError):
        return "(...)"
    parts, keyword_only_marked = [], False
    for parameter in found.parameters.values():
        if parameter.name == "self":
            continue
        text = parameter.name
        if parameter.kind is parameter.VAR_POSITIONAL:
            text, keyword_only_marked = f"*{text}", True
        elif parameter.kind is parameter.VAR_KEYWORD:
            text = f"**{text}"
        elif parameter.kind is parameter.KEYWORD_ONLY and not keyword_only_marked:
            parts.append("*")
            keyword_only_marked = True
        if parameter.annotation is not parameter.empty:
            text += f": {_annotation(parameter.annotation)}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}" if parameter.annotation is not parameter.empty \
                else f"={parameter.default!r}"
        parts.append(text)
    result = "" if found.return_annotation is found.empty else f" -> {_annotation(found.return_annotation)}"
    return f"({', '.join(parts)}){result}"


def _annotation(annotation: Any) -> str:
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def markdown(docstring: str) -> str:
    """A docstring as Markdown: literals and cross-references as code, ``::`` blocks and doctest
    lines as code blocks."""
    out: list[str] = []
    in_block = False
    for line in docstring.splitlines():
        doctest = line.lstrip().startswith(">>>")
        indented = line.startswith("    ") or (in_block and not line.strip())
        if in_block and not (indented or doctest or (line.strip() and out and out[-1].startswith(">>>"))):
            out += ["```", ""]
            in_block = False
        if not in_block and (doctest or (line.strip() and indented and _opens_block(out))):
            out.append("```python")
            in_block = True
        if in_block:
            out.append(line[4:] if line.startswith("    ") else line)
            continue
        text = _ROLE.sub(r"`\1`", _LITERAL.sub(r"`\1`", line))
        out.append(text[:-1] if text.endswith("::") else text)
    if in_block:
        out.append("```")
    return "\n".join(out).strip()


def _opens_block(previous: list[str]) -> bool:
    """Whether an indented line follows a blank line after a paragraph that ended with ``::``
    (written as ``:`` by then)."""
    return len(previous) >= 2 and previous[-1] == "" and previous[-2].endswith(":")


def _first_paragraph(value: Any) -> str:
    doc = inspect.getdoc(value) or ""
    first = doc.split("\n\n")[0]
    return " ".join(_ROLE.sub(r"`\1`", _LITERAL.sub(r"`\1`", first)).split()).replace("|", "\\|")


__all__ = ["api_page", "markdown", "signature"]
