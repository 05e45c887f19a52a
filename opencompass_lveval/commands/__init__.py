"""The ``lveval`` subcommands, one module each.

Every module adds its own parser (``add_parser``) and does its work in a function of keyword-only
arguments; the parser's handler only unpacks the parsed arguments into it. A module imports at
its top nothing but the standard library, and what a command needs (OpenCompass, torch, pandas)
inside its function, so ``lveval --help`` and the commands that need no model start at once.
"""
