"""The agent: a loop that asks the model, runs the tools it asks for, and saves the turn."""


def init_app(app) -> None:
    """Hand context assembly the agent's system prompt (context never imports the agent)."""
    from .. import hooks
    from .prompts import system_prompt
    hooks.SYSTEM_PROMPT["system"] = system_prompt
