"""Every extension point of the app, declared in one place; each package's init_app fills them.

Each hook is a typed signature (a Protocol whose docstring says when it is called) with the
registry that holds its fillers. One idiom fills them: `hooks.add(REGISTRY, item)` in a package's
init_app (`name=` for the registries kept by name); tools and jobs go in by their own names,
through `agent.tools.register_tools` and `jobs.register_jobs`. `FILLED_BY`, at the end, lists which package
fills which registry (tests/test_hooks.py checks it against every init_app). Nothing here imports
the app, so every layer may read it. `add` is idempotent: building a second app in one process
registers nothing twice.
"""
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: this module stays below every layer
    from .agent.tools import Tool
    from .context.assemble import Section
    from .models import Turn


class AfterTurn(Protocol):
    def __call__(self, turn: "Turn", plan: Any) -> None:
        """Once a turn is saved, with the plan it was sent with: queue background work."""


class OfflineTask(Protocol):
    def __call__(self, messages: list[dict]) -> str | None:
        """The offline model asks each in turn: the answer when the request is theirs, else None."""


class SectionSource(Protocol):
    def __call__(self, conversation: Any, policy: Any, history: Any) -> "Section | None":
        """A section of the request besides the system prompt and the history, or None."""


class Reservation(Protocol):
    def __call__(self, conversation: Any, policy: Any, ratio: float) -> int:
        """Tokens a section takes out of the history budget before the history is sized."""


class SystemPrompt(Protocol):
    def __call__(self, conversation: Any) -> str:
        """The system prompt every request starts with (never stored)."""


class ToolSpecs(Protocol):
    def __call__(self, config: dict) -> list[dict]:
        """The tool specs every request carries (the planner counts their tokens)."""


class Job(Protocol):
    """A Huey task made with `jobs.job`: queued by name, so the sweep can queue it again."""
    name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


# name → the tools the model may call (agent/tools.py runs them).
TOOLS: dict[str, "Tool"] = {}
# Once a turn is saved: background work (summaries, memory, titles) hooks in here.
AFTER_TURN: list[AfterTurn] = []
# The offline model asks each in turn (summaries, memory distillation).
OFFLINE_TASKS: list[OfflineTask] = []
# name → task, so the sweep can queue a crashed job again (webapp/jobs.py).
JOBS: dict[str, Job] = {}
# Sections besides system and history, in the order the request carries them.
SECTION_SOURCES: list[SectionSource] = []
# What sections take out of the history budget first.
RESERVATIONS: list[Reservation] = []
# "system" → the prompt every request starts with (the agent's, set by agent.init_app).
SYSTEM_PROMPT: dict[str, SystemPrompt] = {}
# "tools" → the tool specs every request carries (set by agent.init_app).
TOOL_SPECS: dict[str, ToolSpecs] = {}

# Who fills each registry, in its package's init_app (webapp/<package>/__init__.py).
FILLED_BY = {
    "TOOLS": ("shop", "memories"),
    "AFTER_TURN": ("memories", "context", "chat"),
    "OFFLINE_TASKS": ("memories", "context"),
    "JOBS": ("memories", "context", "chat"),
    "SECTION_SOURCES": ("memories", "context"),
    "RESERVATIONS": ("context",),
    "SYSTEM_PROMPT": ("agent",),
    "TOOL_SPECS": ("agent",),
}


def add(registry: list | dict, item, first: bool = False, name: str | None = None) -> None:
    """Put `item` in a registry once: a list's end (or start), or a dict under `name`."""
    if isinstance(registry, dict):
        registry[name] = item
        return
    if item in registry:
        return
    if first:
        registry.insert(0, item)
    else:
        registry.append(item)


def system_prompt(conversation) -> str:
    """The prompt the agent wired in; context assembly knows only this hook, not the agent."""
    try:
        prompt = SYSTEM_PROMPT["system"]
    except KeyError:
        raise RuntimeError("no system prompt wired in: build the app with create_app()") from None
    return prompt(conversation)


def tool_specs(config) -> list[dict]:
    """The tool specs the agent sends with a request; none when no agent is wired in."""
    specs = TOOL_SPECS.get("tools")
    return specs(config) if specs else []
