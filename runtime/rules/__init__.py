"""The built-in inference rules, one module per family of operators.

Each module declares its rules with :func:`opspec.runtime.contract.rule`; the rule
registry (:mod:`opspec.runtime.rulebook`) finds every module of this package on first use,
so a new family is a new module and nothing else. Modules whose name starts with an
underscore are helpers shared by families.
"""
