"""Tools the model may call: plain functions with a JSON-schema description, run by name."""
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from ..plurals import plural
from ..hooks import TOOLS as REGISTRY  # filled by the packages that own tools (register_tools)


@dataclass
class ToolContext:
    """Who is asking: tools read and write only this tenant's and this customer's data."""
    tenant: Any
    user: Any
    conversation: Any
    turn_seq: int
    config: dict = field(default_factory=dict)


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    run: Callable[[ToolContext, dict], dict]
    enabled: Callable[[dict], bool] = lambda config: True
    # A tool that changes something (approval.py): the customer's words that ask for it, the
    # Yes / No question the chat shows otherwise, and the words its Yes sends.
    asks: Any = None  # a compiled pattern; None: a read, always run
    approval: Callable[[dict], str] | None = None
    confirm: Callable[[dict], str] | None = None

    def spec(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def tool(name: str, description: str, properties: dict, required=(), enabled=None,
         asks=None, approval=None, confirm=None):
    """Describe a function as a tool the model can call (its package's init_app registers it);
    a tool that changes something gives `asks`, `approval` and `confirm` (approval.py)."""
    def describe(func):
        schema = {"type": "object", "properties": properties, "required": list(required)}
        func.tool = Tool(name, description, schema, func, enabled or (lambda config: True),
                         asks, approval, confirm)
        return func
    return describe


def register_tools(*funcs) -> None:
    """Offer these @tool functions to the model, by name (offering one twice changes nothing)."""
    for func in funcs:
        REGISTRY[func.tool.name] = func.tool


def tools_for(config) -> list[Tool]:
    return [t for t in REGISTRY.values() if t.enabled(config)]


def run_tool(name: str, context: ToolContext, arguments: dict) -> dict:
    """Run one call; an unknown tool or bad arguments become an error the model can read."""
    tool_ = REGISTRY.get(name)
    if tool_ is None or not tool_.enabled(context.config):
        return {"error": f"Unknown tool: {name}"}
    if "_invalid_json" in arguments:
        return {"error": "The arguments were not valid JSON."}
    missing = [k for k in tool_.parameters["required"] if k not in arguments]
    if missing:
        return {"error": f"Missing {plural(len(missing), 'argument')}: {', '.join(missing)}"}
    try:
        return tool_.run(context, arguments)
    except (TypeError, ValueError) as error:
        return {"error": f"Invalid arguments: {error}"}
    except Exception:  # a broken tool must not break the turn; the model is told, the log has why
        logging.getLogger(__name__).exception("tool %s failed", name)
        return {"error": f"The {name} tool failed. Apologise and offer a support ticket."}
