"""The agent: a loop that asks the model, runs the tools it asks for, and saves the turn."""


def init_app(app) -> None:
    """Hand context assembly the agent's system prompt and tool specs (context never imports
    the agent)."""
    from .. import hooks
    from .prompts import system_prompt
    from .tools import tools_for
    hooks.SYSTEM_PROMPT["system"] = system_prompt
    hooks.TOOL_SPECS["tools"] = lambda config: [t.spec() for t in tools_for(config)]
