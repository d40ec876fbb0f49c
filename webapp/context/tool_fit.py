"""Which tools the next request carries: every tool the window holds beside the system prompt,
a message and the reply, given up one by one in a stated order when not all fit.

`fit_tools` is the one place that decides it: the agent loop sends its specs, and the planner
(so the viewer and the gauge), the banner, the start line and the log say what it left out.
"""
import logging
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..hooks import system_prompt, tool_specs
from ..llm import Profile, estimate_tools, profile_for, tool_tokens
from .plans import sized

# Tokens set aside for the question, before it is known: a page shows the next request before
# anybody asks it, so any question up to this size gets exactly the plan the page showed. A small
# window sets aside less (a sixty-fourth of it), so it keeps its history and memories.
QUESTION_ROOM = 128
# The conversation whose system prompt is measured where none is at hand (start line, banner).
DEFAULT_SHOP = SimpleNamespace(tenant=SimpleNamespace(name="the shop", settings={}),
                               instructions=None, token_ratio=None)
# Given up first when the window cannot hold every tool: the memory tools (the request already
# carries the memories and the history that fit), then the shop's, least needed first, so
# looking up an order goes last. A tool not named here is given up before any that is.
GIVEN_UP_FIRST = ("search_history", "search_memories", "save_memory", "search_help_center",
                  "list_tickets", "create_support_ticket", "check_refund_eligibility",
                  "list_orders", "lookup_order")
log = logging.getLogger(__name__)
_WARNED: set = set()  # (window, tools left out) already logged


@dataclass
class ToolFit:
    """The tools a request carries, and those the window left out (in the order given up)."""
    specs: list[dict]  # as sent, in the order the agent offers them
    tokens: int  # the specs as sent: counted by the server, else estimated
    counted: bool  # the server counted them (no calibration applies)
    window: int | None = None
    left_out: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [spec["name"] for spec in self.specs]

    @property
    def offered(self) -> int:
        return len(self.specs) + len(self.left_out)

    def reason(self) -> str | None:
        """Why tools were left out: what the window holds; None where none were."""
        if not self.left_out:
            return None
        beside = "beside Nimbus's instructions, a message and a reply"
        if not self.specs:
            return f"the {self.window:,}-token window cannot hold the tools' descriptions {beside}"
        return (f"the {self.window:,}-token window holds {len(self.specs)} of {self.offered} "
                f"tools {beside}")

    def words(self) -> str | None:
        """What the window left out and why, in one line (log, start line); None: nothing."""
        if not self.left_out:
            return None
        left_out = ", ".join(self.left_out) if self.specs else f"all {self.offered} tools"
        return f"{left_out} left out: {self.reason()}"


def given_up_order(specs: list[dict]) -> list[str]:
    rank = {name: n for n, name in enumerate(GIVEN_UP_FIRST)}
    return sorted((spec["name"] for spec in specs), key=lambda name: rank.get(name, -1))


def fit_tools(config, profile: Profile | None = None, conversation=None,
              carries: bool | None = None) -> ToolFit:
    """The tools the next request carries: none for a model that cannot carry them (`carries`,
    the profile's word by default), else as many as its window holds beside the system prompt,
    the answer's room, the margin and a question of QUESTION_ROOM tokens."""
    profile = profile or profile_for(config)
    carries = profile.supports_tools if carries is None else carries
    specs = tool_specs(config) if carries else []
    window = profile.context_window
    if not window or not specs:
        return ToolFit(specs, *tool_tokens(config, profile, specs), window)
    conversation = conversation or DEFAULT_SHOP
    ratio = conversation.token_ratio or 1.0
    max_output = config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024
    rest = QUESTION_ROOM + sized([{"role": "system", "content": system_prompt(conversation)}],
                                 ratio)
    # A server that did not count every spec is not asked again for each smaller set (a page
    # would wait on each probe's timeout): the rest are estimated too.
    count = tool_tokens if tool_tokens(config, profile, specs)[1] else \
        (lambda config, profile, kept: (estimate_tools(kept), False))

    def holds(size: int, kept: list[dict]) -> tuple[bool, int, bool]:
        tokens, counted = count(config, profile, kept)  # the reply's room grows with size
        reserve = Profile(profile.kind, profile.model, size).output_reserve(max_output)
        return (reserve + size // 20 + rest + (tokens if counted else round(tokens * ratio))
                <= size, tokens, counted)

    kept, left_out = list(specs), []
    for name in given_up_order(specs):
        fits, tokens, counted = holds(window, kept)
        if fits:
            break
        kept = [spec for spec in kept if spec["name"] != name]
        left_out.append(name)
    else:
        tokens, counted = 0, True
    fit = ToolFit(kept, tokens, counted, window, left_out)
    if left_out and (window, tuple(left_out)) not in _WARNED:
        _WARNED.add((window, tuple(left_out)))
        larger = next((2 ** n for n in range(11, 18) if 2 ** n > window
                       and holds(2 ** n, specs)[0]), None)
        log.warning("provider %s: %s; start the server with a larger context (%s) to send them "
                    "all", profile.label, fit.words(),
                    f"-c {larger} or more for llama-server" if larger else
                    "or set fewer tools or a smaller NIMBUS_MAX_OUTPUT_TOKENS")
    return fit
