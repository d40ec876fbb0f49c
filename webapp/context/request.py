"""The request planner: what the next model call sends, fitted to the provider's window.

`plan_request` is the one place that decides it. The agent loop sends the messages it returns;
the viewer, the chat's gauge, compare and `flask show --context` show the same plan, so what a
person reads about the next request is what the provider receives (docs/context.md).
"""
from dataclasses import dataclass, field

from ..hooks import system_prompt
from ..llm import user_message, Profile, profile_for, estimate_messages
from .assemble import assemble
from .plans import Allotment, ContextPlan, Policy, sized
from .tool_fit import QUESTION_ROOM, ToolFit, fit_tools
from .window import cut, fit, history_room, room_for_plan


def question_room(window: int | None) -> int:
    return QUESTION_ROOM if not window else min(QUESTION_ROOM, max(window // 64, 16))


@dataclass
class RequestShape:
    """What the window holds besides the planned sections; `window` None: no window binds."""
    window: int | None
    reserve: int  # the answer's room (max_tokens)
    margin: int  # the estimate is only an estimate: a twentieth of the window
    tool_tokens: int  # the tool specs as sent: counted by the server, else estimated
    question_tokens: int  # the question (and the turn's tool steps so far), or question_room()
    binds: bool = False  # the window, not the budget, set how much history is sent
    tools_counted: bool = False  # the server counted the tool specs (no calibration applies)
    tools: list[str] = field(default_factory=list)  # the tools sent, by name (fit_tools)
    tools_left_out: list[str] = field(default_factory=list)  # those the window left out
    tools_words: str | None = None  # what was left out and why, in one line
    tools_reason: str | None = None  # why: what the window holds

    def payload(self) -> dict:
        return {"window": self.window, "reserve": self.reserve, "margin": self.margin,
                "tool_tokens": self.tool_tokens, "question_tokens": self.question_tokens,
                "binds": self.binds, "tools_counted": self.tools_counted,
                "tools": self.tools, "tools_left_out": self.tools_left_out,
                "tools_words": self.tools_words, "tools_reason": self.tools_reason}

    def tools_in_window(self, ratio: float) -> int:
        """The tools' share of the window: the server's count as it is, an estimate calibrated."""
        return self.tool_tokens if self.tools_counted else round(self.tool_tokens * ratio)

    def words(self, budget: int, planned_budget: int) -> str:
        """The window and reserve this request was planned for, in one sentence (show --context)."""
        if not self.window:
            return (f"No context window is known for this model: the {budget:,}-token budget alone "
                    f"limits the history; {self.reserve:,} tokens are asked for the answer.")
        lowered = (f"; the window lowered the history budget from {budget:,} to {planned_budget:,}"
                   if planned_budget < budget else "")
        left_out = (f" Left out to fit: {', '.join(self.tools_left_out)} ({self.tools_reason})."
                    if self.tools_left_out else "")
        return (f"Planned for a {self.window:,}-token window: {self.reserve:,} tokens for the "
                f"answer, {self.tool_tokens:,} for the tool descriptions, {self.question_tokens:,} "
                f"for the question{lowered}.{left_out}")

    def fixed(self, ratio: float) -> int:
        """Tokens not planned: the answer's reserve, the margin, the tools and the question."""
        return (self.reserve + self.margin + self.tools_in_window(ratio)
                + round(self.question_tokens * ratio))


def request_shape(config, profile: Profile | None = None, question: list | None = None,
                  tools: ToolFit | None = None, conversation=None) -> RequestShape:
    profile = profile or profile_for(config)
    reserve = profile.output_reserve(config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024)
    tools = tools or fit_tools(config, profile, conversation)
    return RequestShape(profile.context_window, reserve, (profile.context_window or 0) // 20,
                        tools.tokens, max(estimate_messages(question or []),
                                          question_room(profile.context_window)),
                        tools_counted=tools.counted, tools=tools.names,
                        tools_left_out=list(tools.left_out), tools_words=tools.words(),
                        tools_reason=tools.reason())


def plan_request(conversation, config, policy: Policy | None = None,
                 before_seq: int | None = None, question: list | None = None,
                 profile: Profile | None = None, tools: ToolFit | None = None,
                 budget_cap: int | None = None) -> ContextPlan:
    """The next request's plan under `policy` (the conversation's by default), inside the
    provider's window; `question` is the turn being answered (None: not asked yet), `tools`
    the loop's fit_tools (None: fitted here, the same way)."""
    shape = request_shape(config, profile, question, tools, conversation)
    policy = policy or Policy.for_conversation(conversation, config)
    plan = fit(conversation, config, before_seq, shape.window,
               shape.fixed(conversation.token_ratio or 1.0), budget_cap, policy)
    shape.binds = shape.window is not None and (plan.policy.budget < policy.budget or
                                                 plan.policy.memory_room is not None)
    plan.shape = shape
    return plan


def fitted_policy(conversation, config) -> Allotment:
    """The conversation's policy with the budget the window leaves the next request, as
    plan_request first cuts it: the system prompt, the memory block, the tools, the question and
    the answer's reserve set aside. From the settings and the window alone, never from the
    summary, so what a fold takes in does not move with what it writes (summary/section.py)."""
    policy = Policy.for_conversation(conversation, config)
    shape = request_shape(config, conversation=conversation)
    if not shape.window:
        return Allotment.of(policy)
    plan = assemble(conversation, config, policy=policy)
    room = history_room(plan, room_for_plan(shape.window, shape.fixed(conversation.token_ratio
                                                                      or 1.0)))
    return cut(policy, shape.window, room) if room < policy.budget else Allotment.of(policy)


def window_problem(conversation, config, question: str) -> str | None:
    """Why `question` cannot be sent to this model at all, said before anything is stored or
    sent; None when it fits. The system prompt, the tools and the answer's reserve come first,
    and the history gives way to the question, never the other way round."""
    shape = request_shape(config, conversation=conversation)
    if not shape.window:
        return None
    ratio = conversation.token_ratio or 1.0
    fixed = shape.reserve + shape.margin + shape.tools_in_window(ratio) + sized(
        [{"role": "system", "content": system_prompt(conversation)}], ratio)
    tokens = sized([user_message(question)], ratio)
    room = shape.window - fixed
    if tokens <= room:
        return None
    if room < question_room(shape.window):
        parts = "instructions, tools" if shape.tool_tokens else "instructions"
        return (f"This model reads {shape.window:,} tokens at once, and Nimbus's {parts} "
                f"and the answer's room take about {fixed:,} of them, so no message fits. "
                "Start the model's server with a larger context (for llama-server, -c 4096).")
    return (f"This message is about {tokens:,} tokens; this model reads {shape.window:,} at "
            f"once, of which about {room:,} are left for a message. Please shorten it or "
            "attach less.")
