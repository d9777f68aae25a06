"""Hooks: extension functions that observe and intercept the agent, with the exact
semantics of the Lemon format (block, replace arguments, add context, replace results).

Owns the hook registry and the rules that combine handlers' answers; the core runs
each handler (in a sandboxed worker) through a callable it injects. Imports leaves only.
"""
