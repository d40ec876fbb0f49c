"""The agent: a loop that asks the model, runs the tools it asks for, and saves the turn.

loop.py runs one turn (run_turn) and says what a cut-off reply keeps, model_call.py makes one
model call and ends a provider failure mid-stream, tools.py is how a package declares a tool
(`tool`, register_tools), approval.py asks before a tool writes, prompts.py the system prompt
and the assistant's name. Other packages import what is named below; nothing else
(tests/test_layers.py holds the rule).
"""
from .tools import register_tools, tool  # first: packages the loop reaches declare their tools
from .prompts import assistant_name_of
from .loop import FALLBACK_INTERRUPTED, AgentEvent, partial_messages, run_turn

__all__ = ["FALLBACK_INTERRUPTED", "AgentEvent", "assistant_name_of", "partial_messages",
           "register_tools", "run_turn", "tool"]


def init_app(app) -> None:
    """Hand context assembly the agent's system prompt and tool specs (context never imports
    the agent)."""
    from .. import hooks
    from .prompts import system_prompt
    from .tools import tools_for
    hooks.SYSTEM_PROMPT["system"] = system_prompt
    hooks.TOOL_SPECS["tools"] = lambda config: [t.spec() for t in tools_for(config)]
