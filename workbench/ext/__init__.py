"""Installed extensions as units: sources, safe unpacking, the npm registry, fingerprints,
consent bound to content, the signed built-in, and discovery.

The :class:`~workbench.ext.manager.ExtensionManager` installs an extension from a
folder, an archive or the npm registry into ``Home.extensions_dir``, records it in the
store with the digest of its files and what the person approved, and holds it when its
files change afterwards. Nothing here runs an extension's code: manifests are read and
validated only.

This package may import the manifest, store, config and sandbox packages (the
sandbox's policy and Deno for dependencies) and the leaves; never the core, the tool
registry or a front-end.
"""
