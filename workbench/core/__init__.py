"""The Host: one object that owns config, store and registries, runs turns and tool
calls through one gateway, publishes events and raises requests. Never imports a front-end.
"""
