"""Every extension point of the app, declared in one place; each package's init_app fills them.

Following one request means reading the registries below and the `init_app` that fills each:
`shop`, `memories` (tools, after-turn hook, memory section, offline distiller, jobs), `context`
(summary section, offline summarizer, summary job), `agent` (the system prompt) and `chat`
(deletion job). Nothing here imports the app, so every layer may read it. `add` is idempotent:
building a second app in one process registers nothing twice.
"""
from typing import Any, Callable

# name → agent.tools.Tool: the tools the model may call (agent/tools.py runs them).
TOOLS: dict[str, Any] = {}
# (turn, plan) → None, once a turn is saved: background work (summaries, memory) hooks in here.
AFTER_TURN: list[Callable] = []
# messages → answer or None: the offline model asks each in turn (summaries, memory distillation).
OFFLINE_TASKS: list[Callable] = []
# name → Huey task, so the sweep can queue a crashed job again (webapp/jobs.py).
JOBS: dict[str, Any] = {}
# (conversation, policy, history plan) → Section | None: sections besides system and history.
SECTION_SOURCES: list[Callable] = []
# (conversation, policy, ratio) → tokens a section takes out of the history budget first.
RESERVATIONS: list[Callable] = []
# conversation → the system prompt every request starts with (the agent's, set by agent.init_app).
SYSTEM_PROMPT: dict[str, Callable] = {}
# config → the tool specs every request carries (set by agent.init_app; the planner counts them).
TOOL_SPECS: dict[str, Callable] = {}


def add(registry: list, item, first: bool = False) -> None:
    """Put `item` in a list registry once, at its end (or at its start)."""
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
