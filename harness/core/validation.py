"""Readable pydantic errors: one line per problem, unknown keys listed with the valid ones."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["StrictModel", "format_validation_error", "validation_problems"]


class StrictModel(BaseModel):
    """Base of every config section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


def format_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One readable line per problem; unknown keys list the valid ones."""
    return "; ".join(text for _, text in validation_problems(exc, model))


def validation_problems(
    exc: ValidationError, model: type[BaseModel] | None = None
) -> list[tuple[tuple[Any, ...], str]]:
    """Each problem's location (key path) and its readable text."""
    parts: list[tuple[tuple[Any, ...], str]] = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            valid = _valid_keys(model, err["loc"][:-1]) if model else []
            hint = f"; valid keys: {', '.join(valid)}" if valid else ""
            text = f"unknown key '{loc}'{hint}"
        elif err["type"] == "missing":
            text = f"missing key '{loc}'"
        else:
            text = f"'{loc}': {err['msg']}" if loc else err["msg"]
        parts.append((tuple(err["loc"]), text))
    return parts


def _valid_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field_info = getattr(current, "model_fields", {}).get(part)
        if field_info is None:
            return []
        annotation = field_info.annotation
        current = _model_in(annotation)
        if current is None:
            return []
    return sorted(getattr(current, "model_fields", {}).keys())


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None
