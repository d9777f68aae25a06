"""Worker processes that run one tool call each with exactly the granted access.

Landlock, seccomp, namespaces and rlimits applied in a child of a zygote process; the
JSON-RPC bridge between a worker and the host. Knows nothing of sessions, the store
or front-ends: it gets a policy and a tool, and reports through callbacks.
"""
