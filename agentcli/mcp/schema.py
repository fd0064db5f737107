"""A server's input schema made acceptable to the model providers, or the reason it cannot be.

Providers are stricter than MCP: the root must be an object schema without ``oneOf``/``anyOf``/
``allOf``/``enum``/``not`` (OpenAI and Anthropic refuse such a tool, and with it the whole
request). A schema that is not valid JSON Schema, or whose root is not an object, would break
every request it is part of, so the tool is left out and the user told why.
"""

from __future__ import annotations

import copy
from typing import Any

_ROOT_COMBINATORS = ("oneOf", "anyOf", "allOf", "not", "enum")
_DROPPED_AT_ROOT = ("$schema", "$id", "title")


class UnusableSchema(ValueError):
    """The schema cannot be offered to a model; the message says why."""


def adapt_schema(schema: object) -> dict[str, Any]:
    """The ``parameters`` to offer for a tool whose ``inputSchema`` is ``schema``.

    Raises:
        UnusableSchema: it is not a JSON Schema object, or not of an object.
    """
    if not isinstance(schema, dict):
        raise UnusableSchema(f"its input schema is a {type(schema).__name__}, not a JSON object")
    # jsonschema comes with the mcp SDK (which validates structured results with it); untyped.
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        raise UnusableSchema(f"its input schema is not valid JSON Schema at {where}: {error.message}") from None
    kind = schema.get("type", "object")
    if kind != "object":
        raise UnusableSchema(f"its input schema describes {kind!r}, not an object of arguments")
    adapted = copy.deepcopy(schema)
    for key in _DROPPED_AT_ROOT:
        adapted.pop(key, None)
    adapted["type"] = "object"
    adapted.setdefault("properties", {})
    combined = [key for key in _ROOT_COMBINATORS if key in adapted]
    if combined:
        # The alternatives cannot be said at the root; their properties are merged so the model
        # still sees every argument, and the server checks the combination itself.
        for key in combined:
            branches = adapted.pop(key)
            for branch in branches if isinstance(branches, list) else []:
                if isinstance(branch, dict):
                    for name, prop in branch.get("properties", {}).items():
                        adapted["properties"].setdefault(name, prop)
        if "anyOf" in combined or "oneOf" in combined:
            adapted.pop("required", None)  # each alternative requires its own arguments
    return adapted
