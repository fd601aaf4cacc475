"""Render compiled domains into the files of a registry package: Python modules and docs.

Templates only render; every decision about content is made here or in the model.
The result is a mapping from relative path to text, so writing and freshness checks
share one code path and the output is deterministic.
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

import jinja2

from opspec.codegen.changelog import Histories, changelog, opsets
from opspec.codegen.compiler import CompiledDomain, CompiledOp
from opspec.codegen.diagnostics import joined_failure
from opspec.codegen.docs_coverage import COVERAGE_PAGE, COVERAGE_PICTURE, coverage_page, coverage_svg
from opspec.codegen.docs_pages import Glance, family_rows, md_cell, opset_page, status_table
from opspec.codegen.examples import WorkedExamples, worked_examples
from opspec.codegen.type_names import TypeSetNames
from opspec.codegen.parallel import forked_map
from opspec.codegen.op_module import module_text
from opspec.codegen.op_page import page_parts
from opspec.codegen.pyliteral import docstring, py
from opspec.runtime.schema import OpSchema

TEMPLATES = Path(__file__).resolve().parent / "templates"



def module_name(name: str) -> str:
    """A safe Python module name for a domain or an op."""
    cleaned = re.sub(r"\W", "_", name)
    if not cleaned.isidentifier() or keyword.iskeyword(cleaned) or cleaned[0] == "_":
        cleaned = "op_" + cleaned
    return cleaned


def docs_folder(domain: CompiledDomain) -> str:
    """The folder (under ``docs/``) of a domain's pages: its name."""
    return domain.decl.name or module_name(domain.decl.node_domain)


def _md_code(text: str) -> str:
    """Text for inside a code span; the empty string is shown as a quoted empty string."""
    return text.replace("`", "'") if text else '""'


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's per-user cache of compiled templates (in the temp folder); a cache entry that
    cannot be read or written only costs a compilation."""

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - a damaged entry of any kind is only recompiled
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _template_cache() -> jinja2.BytecodeCache | None:
    """The compiled-template cache, when it can be made: compiling the templates is a good part
    of a small generation."""
    try:
        return _TemplateCache()
    except (OSError, RuntimeError):
        return None


def _environment() -> jinja2.Environment:
    """The template environment, built once (templates compile on first use)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_template_cache(),
        auto_reload=False,  # a run renders templates that do not change under it: no look at each file per page
    )
    env.filters.update(py=py, pydoc=docstring, mdcell=md_cell, mdcode=_md_code)
    # Few globals: a render copies them all (an op page gets its parts as variables, see op_page.py).
    env.globals.update(docs_folder=docs_folder, family_rows=family_rows, opset_page=opset_page)
    return env


def _families(domain: CompiledDomain) -> list[tuple[str, list[CompiledOp]]]:
    families: dict[str, list[CompiledOp]] = {}
    for op in domain.ops:
        families.setdefault(op.decl.family, []).append(op)
    return sorted(families.items())


#: A piece of a package's rendering: some of its files, ``{relative path: text}``.
Job = Callable[[], dict[str, str]]


def render_package(domains: tuple[CompiledDomain, ...], source: str, format_link: str | None = None,
                   suite: dict[str, str] | None = None, layers: tuple[str, ...] = ()) -> dict[str, str]:
    """All files of a registry package: ``{relative path: text}``.

    ``format_link`` is a relative link from the docs folder to a description of the
    opdefs format, when the tree has one; ``suite`` the node-suite outcome of each case
    (``{"test_abs": "EXACT", ...}``), when known, for the status page. The files are rendered
    by independent jobs, spread over the cores for a large tree; the result is the same.
    """
    return run_jobs(package_jobs(domains, source, format_link, suite, layers))


def package_jobs(domains: tuple[CompiledDomain, ...], source: str, format_link: str | None = None,
                 suite: dict[str, str] | None = None, layers: tuple[str, ...] = (), prefix: str = "",
                 kernels: Any = None, provider_pages: tuple[str, ...] = ()) -> list[Job]:
    """The jobs that render the files of :func:`render_package`, each path preceded by ``prefix``
    (the jobs of several packages can run together, see :func:`run_jobs`); ``kernels`` a
    :class:`~opspec.codegen.kernel_pages.KernelIndex` whose kernels the op pages list (None: none);
    ``provider_pages`` the pages of this package's kernel tables, which the docs index links."""
    env = _environment()
    for name in env.list_templates(extensions=("j2",)):  # compiled here, once, not in each forked process
        env.get_template(name)
    catalogue = domains[0].catalogue if domains else None
    jobs: list[Job] = []
    modules: dict[tuple[str, str], str] = {}
    for domain in domains:
        package = module_name(domain.decl.name)
        jobs.append(partial(_template_file, env, f"{package}/__init__.py", "domain_package.py.j2", domain=domain))
        for op in domain.ops:
            module = module_name(op.decl.name)
            modules[op.decl.domain, op.decl.name] = f"{package}.{module}"
            jobs.append(partial(_op_module_file, f"{package}/{module}.py", op))
    rule_modules = _rule_module_copies(catalogue, source)
    jobs.append(partial(dict, rule_modules))
    jobs.append(partial(_template_file, env, "__init__.py", "registry_index.py.j2",
                        domains=domains, modules=modules, source=source,
                        rule_modules=tuple(path[:-3].replace("/", ".") for path in sorted(rule_modules)
                                           if path != "rules/__init__.py")))
    jobs += _docs_jobs(domains, source, env, format_link, suite, layers, kernels, provider_pages)
    return [partial(_prefixed, prefix, job) for job in jobs] if prefix else jobs


def _prefixed(prefix: str, job: Job) -> dict[str, str]:
    return {prefix + path: text for path, text in job().items()}


def run_jobs(jobs: list[Job]) -> dict[str, str]:
    """Every job's files, in the jobs' order (the jobs spread over the cores). Every job runs even
    when some fail; then the failures are raised as one (see :func:`joined_failure`)."""
    files: dict[str, str] = {}
    done = forked_map(_attempted, jobs)
    failure = joined_failure([error for _, error in done])
    if failure is not None:
        raise failure
    for found, _ in done:
        files.update(found)
    return files


def _attempted(job: Job) -> tuple[dict[str, str], Exception | None]:
    """A job's files, or the error that stopped it."""
    try:
        return job(), None
    except Exception as error:  # noqa: BLE001 - raised by the caller, with the other jobs' errors
        return {}, error


def _template_file(env: jinja2.Environment, path: str, template: str, **context: Any) -> dict[str, str]:
    """One file rendered from a template."""
    return {path: env.get_template(template).render(**context)}


def _op_module_file(path: str, op: CompiledOp) -> dict[str, str]:
    """The Python module that holds an op's schemas."""
    return {path: module_text(op)}


def _rule_module_copies(catalogue: Any, source: str) -> dict[str, str]:
    """The tree's own rule modules, copied into the package's ``rules`` subpackage."""
    if catalogue is None or not catalogue.modules:
        return {}
    mark = f"# Generated by `opspec generate`: a copy of {source}rules/{{name}}; edit that file instead.\n"
    files = {"rules/__init__.py": mark.format(name="") + '"""The op set\'s own inference rules."""\n'}
    for name, text in catalogue.modules:
        files[f"rules/{name}"] = mark.format(name=name) + text
    return files


def render_docs(domains: tuple[CompiledDomain, ...], source: str, env: jinja2.Environment | None = None,
                format_link: str | None = None, suite: dict[str, str] | None = None,
                layers: tuple[str, ...] = ()) -> dict[str, str]:
    """The Markdown reference: an index, type sets, and per domain an op list, op pages
    (with worked examples), a changelog, a page per opset and an inference status page.
    ``layers`` names the op sets layered over this one (each has docs of its own)."""
    return run_jobs(_docs_jobs(domains, source, env or _environment(), format_link, suite, layers))


def _docs_jobs(domains: tuple[CompiledDomain, ...], source: str, env: jinja2.Environment,
               format_link: str | None, suite: dict[str, str] | None, layers: tuple[str, ...],
               kernels: Any = None, provider_pages: tuple[str, ...] = ()) -> list[Job]:
    """The jobs that render the docs (see :func:`render_docs`)."""
    jobs: list[Job] = []
    examples = worked_examples(domains)  # each op page computes its own, where it is rendered
    for domain in domains:
        jobs += _domain_docs_jobs(domain, env, suite, examples, kernels)
    type_sets = dict(item for domain in domains for item in domain.type_sets)
    jobs.append(partial(_template_file, env, "docs/README.md", "docs_index.md.j2", domains=domains, source=source,
                        format_link=format_link, type_sets=bool(type_sets), layers=layers,
                        provider_pages=provider_pages))
    if type_sets:
        jobs.append(partial(_template_file, env, "docs/types.md", "types.md.j2",
                            type_sets=sorted(type_sets.items()), source=source))
    jobs.append(lambda: _template_file(env, "docs/rules.md", "rules.md.j2", rules=_rule_usage(domains)))
    return jobs


def _domain_docs_jobs(domain: CompiledDomain, env: jinja2.Environment, suite: dict[str, str] | None,
                      examples: WorkedExamples, kernels: Any = None) -> list[Job]:
    """The jobs that render one domain's pages."""
    from opspec.codegen.kernel_pages import kernel_versions

    folder = f"docs/{docs_folder(domain)}"
    cpu_kernels = kernel_versions(kernels, "cpu", domain.decl.name)
    histories = Histories(TypeSetNames(domain.type_sets, "../types.md"))

    def page(name: str, template: str, **context: Any) -> Job:
        return partial(_template_file, env, f"{folder}/{name}", template, domain=domain, **context)

    jobs: list[Job] = [
        page("README.md", "domain_index.md.j2", families=_families(domain)),
        lambda: _template_file(env, f"{folder}/changelog.md", "changelog.md.j2", domain=domain,
                               changelog=changelog(domain, histories)),
    ]
    glance = Glance(domain)
    jobs += [partial(_opset_page, env, f"{folder}/{opset_page(opset)}", domain, glance, opset)
             for opset in opsets(domain)]
    jobs += [
        lambda: _template_file(env, f"{folder}/status.md", "status.md.j2", domain=domain,
                               table=status_table(domain, suite), suite=bool(suite)),
        lambda: {f"{folder}/{COVERAGE_PAGE}": coverage_page(domain, cpu_kernels)},
        lambda: {f"{folder}/{COVERAGE_PICTURE}": coverage_svg(domain, cpu_kernels)},
    ]
    jobs += [partial(_op_page, env, f"{folder}/{op.decl.name}.md", domain, op, histories, examples, kernels)
             for op in domain.ops]
    return jobs


def _opset_page(env: jinja2.Environment, path: str, domain: CompiledDomain, glance: Glance, opset: int) -> dict[str, str]:
    return _template_file(env, path, "opset.md.j2", domain=domain, opset=opset, glance=glance.page(opset))


def _op_page(env: jinja2.Environment, path: str, domain: CompiledDomain, op: CompiledOp, histories: Histories,
             examples: WorkedExamples, kernels: Any = None) -> dict[str, str]:
    from opspec.codegen.kernel_pages import op_kernels_text

    return _placed(env, path, "op.md.j2", page_parts(op, domain, histories.of(op), examples.of(domain, op),
                                                     histories.names.markdown,
                                                     op_kernels_text(kernels, domain.decl.name, op.decl.name)))


def _placed(env: jinja2.Environment, path: str, template: str, parts: dict[str, Any]) -> dict[str, str]:
    """One file from a template that only places ``parts``: rendered in a context of the parts alone,
    not a copy of them with the environment's globals (which costs more than placing them)."""
    found = env.get_template(template)
    return {path: "".join(found.root_render_func(found.new_context(parts, shared=True)))}


@dataclass(frozen=True)
class _RuleUser:
    name: str
    link: str
    versions: tuple[int, ...]


@dataclass(frozen=True)
class _RuleUsage:
    spec: Any
    users: tuple[_RuleUser, ...]


def _rule_usage(domains: tuple[CompiledDomain, ...]) -> list[_RuleUsage]:
    """Every declared rule with the operator versions that use it."""
    rules = domains[0].catalogue.rules if domains else {}
    users: dict[str, list[_RuleUser]] = {name: [] for name in rules}
    for domain in domains:
        for op in domain.ops:
            by_rule: dict[str, list[int]] = {}
            for schema in op.schemas:
                if schema.inference is not None:
                    by_rule.setdefault(schema.inference.name, []).append(schema.since_version)
            for rule, versions in by_rule.items():
                users[rule].append(_RuleUser(op.decl.name, f"{docs_folder(domain)}/{op.decl.name}.md", tuple(versions)))
    return [_RuleUsage(rules[name].spec, tuple(found)) for name, found in sorted(users.items())]
