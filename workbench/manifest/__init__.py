"""The extension manifest: pydantic models and JSON Schema of ``loca.json``, and its static validator.

This package imports nothing of workbench but ``workbench.errors`` and the leaves.
"""
