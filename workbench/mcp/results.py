"""What crosses between an MCP server and the workbench: results, progress, forms.

A tool's ``CallToolResult`` is kept whole, in the protocol's own field names:
``content``, ``structuredContent`` and ``isError``. An ``isError`` result becomes a
failed call whose error carries the same fields, so the model still reads what the
server said and the front-ends show it as an error.

An elicitation request (a server asking the person for input) becomes an ask-user
form: one ``choice`` question per field of its schema — the options of an enum or a
boolean, free text for strings and numbers (a default offered as an option) — and
the answers are turned back into the typed object the schema asks for. A URL
elicitation asks the person to open the link and say when they are done.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import ToolError

ELICIT_PREFIX = "MCP server {server} asks"


def result_json(result: Any) -> dict[str, Any]:
    """A ``CallToolResult`` as JSON: ``content``, ``structuredContent`` (when given),
    ``isError`` and ``_meta`` (when given)."""
    data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("resultType", None)
    data.setdefault("content", [])
    data["isError"] = bool(data.get("isError", False))
    return data


def outcome(result: Any) -> dict[str, Any]:
    """The call's value, or ``ToolError`` (kind ``tool``) for an ``isError`` result.

    Raises:
        ToolError: The server said the call failed; the error holds its whole result.
    """
    data = result_json(result)
    if data["isError"]:
        texts = [c.get("text", "") for c in data["content"] if c.get("type") == "text"]
        message = "\n".join(t for t in texts if t) or "the MCP tool reported an error"
        raise ToolError("tool", message, **{k: v for k, v in data.items() if k != "_meta"})
    return data


def progress_fraction(progress: float, total: float | None) -> float:
    """A server's progress as 0–1: against ``total`` when given, else as it is (clamped)."""
    if total:
        return max(0.0, min(1.0, progress / total))
    return max(0.0, min(1.0, progress))


def progress_label(progress: float, total: float | None, message: str | None) -> str | None:
    """What to show beside the bar: the server's message, or the count."""
    if message:
        return message
    return f"{progress:g}/{total:g}" if total else f"{progress:g}"


# --- elicitation ---------------------------------------------------------------------


def elicitation_questions(server: str, params: Any) -> list[dict[str, Any]]:
    """The ask-user questions for an elicitation request (form or URL mode)."""
    header = f"{ELICIT_PREFIX.format(server=server)}: {params.message}"
    if getattr(params, "mode", "form") == "url":
        return [{"question": f"{header}\n\nOpen {params.url} and finish there.",
                 "options": [{"label": "Done", "value": "accept"},
                             {"label": "Decline", "value": "decline"}],
                 "name": "_url"}]
    schema = getattr(params, "requested_schema", None) or {}
    required = set(schema.get("required") or [])
    questions = []
    for index, (name, prop) in enumerate((schema.get("properties") or {}).items()):
        title = prop.get("title") or name
        text = f"{title}: {prop['description']}" if prop.get("description") else str(title)
        question: dict[str, Any] = {"question": f"{header}\n\n{text}" if index == 0 else text,
                                    "name": name, "schema": prop}
        if name not in required:
            question["question"] += " (optional)"
            question["optional"] = True  # may be left empty
        options = _options(prop)
        if options:
            question["options"] = options
            question["multiselect"] = prop.get("type") == "array"
        else:
            question["allowFreeformInput"] = True
            if "default" in prop:
                question["options"] = [{"label": f"{prop['default']} (default)",
                                        "value": prop["default"]}]
        questions.append(question)
    return questions


def _options(prop: dict[str, Any]) -> list[dict[str, Any]]:
    kind = prop.get("type")
    if kind == "boolean":
        return [{"label": "Yes", "value": True}, {"label": "No", "value": False}]
    source = prop.get("items", {}) if kind == "array" else prop
    if "oneOf" in source or "anyOf" in source:
        return [{"label": str(o.get("title", o.get("const"))), "value": o.get("const")}
                for o in source.get("oneOf") or source.get("anyOf") if "const" in o]
    if "enum" in source:
        names = source.get("enumNames") or prop.get("enumNames") or source["enum"]
        return [{"label": str(label), "value": value} for label, value in zip(names, source["enum"])]
    return []


def elicitation_answer(questions: list[dict[str, Any]], answers: list[Any]) -> tuple[str, dict[str, Any]]:
    """``(action, content)`` from the form's answers.

    Raises:
        ValueError: An answer does not fit its field (e.g. text for an integer).
    """
    if len(answers) != len(questions):
        raise ValueError(f"expected {len(questions)} answers, got {len(answers)}")
    if questions and questions[0].get("name") == "_url":
        return ("accept" if answers[0] == "accept" else "decline"), {}
    content: dict[str, Any] = {}
    for question, answer in zip(questions, answers):
        if answer is None or answer == "":
            continue
        content[question["name"]] = _coerce(question["name"], question.get("schema") or {}, answer)
    return "accept", content


def _coerce(name: str, prop: dict[str, Any], answer: Any) -> Any:
    kind = prop.get("type")
    try:
        if kind == "integer" and not isinstance(answer, bool):
            value = int(str(answer).strip())
        elif kind == "number" and not isinstance(answer, bool):
            value = float(str(answer).strip())
        elif kind == "boolean":
            value = answer if isinstance(answer, bool) else str(answer).strip().lower() in (
                "yes", "true", "y", "1", "on")
        elif kind == "array":
            value = list(answer) if isinstance(answer, list) else [answer]
        else:
            value = answer if isinstance(answer, str) else str(answer)
    except ValueError:
        wanted = "an integer" if kind == "integer" else "a number"
        raise ValueError(f"{name}: {answer!r} is not {wanted}") from None
    for bound, ok in (("minimum", lambda v, b: v >= b), ("maximum", lambda v, b: v <= b)):
        if bound in prop and isinstance(value, (int, float)) and not ok(value, prop[bound]):
            raise ValueError(f"{name}: {value} is outside {prop.get('minimum')}..{prop.get('maximum')}")
    return value
