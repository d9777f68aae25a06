"""The scripted front-end: JSONL events on stdout, and requests answered by policy.

Depends on the core (and the agent's turn loop); never on the TUI or textual. Nothing here ever waits for input
that will not come.
"""
