"""The command-line reference page, written from the ``opspec`` command's own argument parser,
so the page lists exactly the commands and options the installed command accepts."""
from __future__ import annotations

import argparse
from typing import Iterable

#: The width usage lines are wrapped at (the page does not depend on the terminal that builds it).
_WIDTH = 88


def cli_page(parser: argparse.ArgumentParser) -> str:
    """The Markdown page: the command's usage and options, then a section per subcommand."""
    commands = _subcommands(parser)
    lines = ["# Command line", "", parser.description or "", "",
             "```text", _usage(parser), "```", ""]
    lines += ["| Command | What it does |", "|---|---|"]
    lines += [f"| [`{name}`](#{_anchor(name)}) | {_cell(help_text)} |" for name, help_text, _ in commands]
    lines += ["", *_options(parser, skip_help=True)]
    if parser.epilog:
        lines += ["", f"The exit status: {parser.epilog.removeprefix('exit status: ')}.", ""]
    for name, help_text, command in commands:
        lines += [f"## {parser.prog} {name} {{#{_anchor(name)}}}", "", _sentence(help_text), ""]
        if command.description and command.description != help_text:
            lines += [command.description, ""]
        lines += ["```text", _usage(command), "```", "", *_arguments(command), *_options(command, skip_help=True)]
    return "\n".join(lines).rstrip() + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """Each subcommand's name, its one-line help and its parser, in the order they were added."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), command) for name, command in action.choices.items()]
    return found


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    """The table of a command's positional arguments (none: nothing)."""
    rows = [f"| `{action.metavar or action.dest}` | {_cell(action.help or '')} |"
            for action in parser._actions if not action.option_strings and action.help is not argparse.SUPPRESS
            and not isinstance(action, argparse._SubParsersAction)]
    return ["| Argument | Meaning |", "|---|---|", *rows, ""] if rows else []


def _options(parser: argparse.ArgumentParser, skip_help: bool) -> list[str]:
    """The table of a command's options (none: nothing)."""
    rows = [f"| {_spelling(action)} | {_cell(_meaning(action))} |" for action in parser._actions
            if action.option_strings and action.help is not argparse.SUPPRESS
            and not (skip_help and isinstance(action, argparse._HelpAction))]
    return ["| Option | Meaning |", "|---|---|", *rows, ""] if rows else []


def _spelling(action: argparse.Action) -> str:
    """How an option is written: each of its spellings, with its value's name when it takes one."""
    value = ""
    if action.nargs != 0:
        value = " " + (action.metavar if isinstance(action.metavar, str) else action.dest.upper())
        if action.choices is not None:
            value = " {" + ",".join(map(str, action.choices)) + "}"
    return ", ".join([f"`{spelling}{value}`" for spelling in action.option_strings])


def _meaning(action: argparse.Action) -> str:
    text = action.help or ""
    if isinstance(action, argparse._VersionAction):
        text = text or "print the version and exit"
    if isinstance(action, argparse._AppendAction):
        text += "" if "repeated" in text else " (may be repeated)"
    if action.required:
        text += " (required)"
    return text


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _sentence(text: str) -> str:
    """A help line as a sentence: capitalised, with a full stop."""
    text = text.strip()
    return f"{text[:1].upper()}{text[1:]}{'' if text.endswith('.') else '.'}" if text else ""


def _anchor(command: str) -> str:
    return f"opspec-{command}"


def command_names(parser: argparse.ArgumentParser) -> Iterable[str]:
    """The subcommands the page has a section for."""
    return [name for name, _, _ in _subcommands(parser)]


__all__ = ["cli_page", "command_names"]
