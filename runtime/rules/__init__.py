"""The built-in inference rules, one module per family of operators.

Each module declares its rules with :func:`opspec.runtime.contract.rule`; the rule
registry (:mod:`opspec.runtime.rulebook`) finds every module of this package on first use,
so a new family is a new module and nothing else. Modules whose name starts with an
underscore are helpers shared by families.

A rule written for one op, or for ops whose inputs share their names, addresses inputs and
outputs by the names the op's YAML declares (``ctx.input_with_rank("past_key", 4)``); the
compiler checks each name written as a literal in those calls against every op version bound
to the rule. Generic rules shared by ops whose inputs are named differently (elementwise,
reductions, shape ops, where ``A`` and ``B`` of one op are ``X`` and ``Y`` of another) address
them by position, which is what they mean there: the first input, the second.
"""
