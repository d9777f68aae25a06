"""The published JSON Schema of `loca.json`, generated from the models.

The schema is checked in next to this module as `loca.schema.json`, for authors'
editors; a test fails when it drifts from the models. Rewrite it after changing the
models with::

    python -m workbench.manifest.schema

This module imports nothing of workbench but the manifest models.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from workbench.manifest.models import Manifest

SCHEMA_PATH = Path(__file__).with_name("loca.schema.json")
"""Where the checked-in schema lives."""

SCHEMA_ID = "https://get.loca.rzkyif.com/schemas/loca-v1.json"
"""The `$id` of the schema: the URL manifests name in their `$schema`."""

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect the schema is written in."""


@functools.cache
def _model_classes() -> dict[str, ast.ClassDef]:
    """The class statements of ``workbench.manifest.models``' source, by name."""
    from workbench.manifest import models

    tree = ast.parse(inspect.getsource(models))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def field_docstrings(cls: type) -> dict[str, str]:
    """The docstring under each field of a model of ``workbench.manifest.models``, by
    attribute name, the nearest class of its MRO first (a model ``create_model`` made
    keeps its bases' docstrings, as pydantic's ``use_attribute_docstrings`` would).

    The models do not set ``use_attribute_docstrings``: pydantic would read and compile
    their source at every start, while only the published schema shows these
    descriptions."""
    from workbench.manifest import models

    classes = _model_classes()
    found: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        node = classes.get(base.__name__)
        if node is None or base.__module__ != models.__name__:
            continue
        for statement, after in zip(node.body, node.body[1:]):
            if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                found[statement.target.id] = inspect.cleandoc(after.value.value)
    return found


class _ManifestSchema(GenerateJsonSchema):
    """Pydantic's generator, without a title on every property, and with each field's
    docstring as its description."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: Any) -> Any:
        cls = schema["cls"]
        config = cls.model_config
        with self._config_wrapper_stack.push(config):
            json_schema = self.generate_inner(schema["schema"])
        properties = json_schema.get("properties", {})
        for name, text in field_docstrings(cls).items():
            field = cls.model_fields.get(name)
            prop = properties.get(field.alias or name) if field is not None else None
            if isinstance(prop, dict) and field is not None and field.description is None:
                prop["description"] = text
        self._update_class_schema(json_schema, cls, config)
        return json_schema


def _tidy(node: Any) -> Any:
    """Reflow docstring-born descriptions into single paragraphs."""
    if isinstance(node, dict):
        tidy = {key: _tidy(value) for key, value in node.items()}
        description = tidy.get("description")
        if isinstance(description, str):
            paragraphs = re.split(r"\n\s*\n", description.strip())
            tidy["description"] = "\n\n".join(" ".join(p.split()) for p in paragraphs)
        return tidy
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    return node


def generate_schema() -> dict[str, Any]:
    """Return the JSON Schema of `loca.json`, with the file's camelCase keys.

    Returns:
        A draft 2020-12 schema: `$schema`, `$id`, then what pydantic generates from
        :class:`~workbench.manifest.models.Manifest`.
    """
    generated = Manifest.model_json_schema(by_alias=True, mode="validation",
                                           schema_generator=_ManifestSchema)
    return {"$schema": DIALECT, "$id": SCHEMA_ID, **_tidy(generated)}


def render_schema() -> str:
    """Return the schema as the checked-in file has it: 2-space JSON and a final newline."""
    return json.dumps(generate_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    """Write the schema to `path` (the checked-in file by default) and return the path."""
    path.write_text(render_schema(), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Rewrite the checked-in schema, or the file named by the only argument."""
    args = sys.argv[1:] if argv is None else argv
    written = write_schema(Path(args[0]) if args else SCHEMA_PATH)
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
