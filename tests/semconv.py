"""The GenAI semantic conventions' YAML model (tests/data/otel, copied from the conventions'
repository) read as rules: the attributes each kind of span and metric must carry, and the type
the registry gives each GenAI attribute; `problems` lists where a span or metric breaks them."""
from functools import cache
from pathlib import Path

import yaml

OTEL = Path(__file__).parent / "data" / "otel"
PYTHON_TYPES = {"string": str, "int": int, "double": (float, int), "boolean": bool,
                "string[]": list}


@cache
def groups() -> dict:
    found = {}
    for name in ("spans", "metrics", "registry"):
        for group in yaml.safe_load((OTEL / f"gen-ai-{name}.yaml").read_text())["groups"]:
            found[group["id"]] = group
    return found


@cache
def registry_types() -> dict:
    """GenAI attribute → its type in the registry ('string' for an enum of strings)."""
    types = {}
    for group in groups().values():
        if group.get("type") == "attribute_group" and group["id"].startswith("registry."):
            for attribute in group.get("attributes", []):
                kind = attribute.get("type")
                types[attribute["id"]] = "string" if isinstance(kind, dict) else kind
    return types


def rules(group_id: str) -> dict:
    """Attribute → its requirement level in a group, its `extends` chain included."""
    group = groups()[group_id]
    found = dict(rules(group["extends"])) if group.get("extends") else {}
    for attribute in group.get("attributes", []):
        key = attribute.get("ref") or attribute.get("id")
        found[key] = attribute.get("requirement_level", found.get(key, "recommended"))
    return found


def problems(group_id: str, attributes: dict, failed: bool = False,
             streaming: bool = False) -> list[str]:
    """What a span's or a data point's attributes lack or get wrong under `group_id`."""
    levels, types, out = rules(group_id), registry_types(), []
    out += [f"{key} is required" for key, level in levels.items()
            if level == "required" and key not in attributes]
    if failed and "error.type" in levels and "error.type" not in attributes:
        out.append("error.type is required: the operation ended in an error")
    if not failed and "error.type" in attributes:
        out.append("error.type set on an operation that did not fail")
    if "gen_ai.request.stream" in levels and streaming != (
            attributes.get("gen_ai.request.stream") is True):
        out.append("gen_ai.request.stream is set if and only if the request streams")
    for key, value in attributes.items():
        if not key.startswith("gen_ai."):
            continue
        kind = types.get(key)
        if kind is None:
            out.append(f"{key} is no attribute of the conventions' registry")
        elif kind in PYTHON_TYPES and not isinstance(value, PYTHON_TYPES[kind]) or \
                kind == "int" and isinstance(value, bool):
            out.append(f"{key} should be {kind}, got {type(value).__name__}")
    return out


def metric_problems(name: str, instrument: str, unit: str) -> list[str]:
    """Whether a metric is one the conventions define, with their instrument and unit."""
    group = groups().get(f"metric.{name}")
    if group is None or group.get("type") != "metric":
        return [f"{name} is no metric of the conventions"]
    return [f"{name}: {what} {got!r}, the conventions say {want!r}" for what, got, want in (
        ("instrument", instrument, group["instrument"]), ("unit", unit, group["unit"]))
        if got != want]


def otlp_value(value):
    """An OTLP AnyValue as the Python value it carries."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [otlp_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def otlp_attributes(items) -> dict:
    return {item.key: otlp_value(item.value) for item in items}
