"""Fitting a request inside the model's context window.

The window holds: system prompt + long-term memory + summary + history (the assembled plan),
the tool specs, the turn being answered, and the answer itself (the output reserve). Assembly
plans the history within its budget; here the budget is lowered to what the window leaves once
the rest is set aside (`history_room`) when the window is the tighter limit, so the whole request
fits; the rolling summary then takes at most a third of it (summary/room.py). A server that
still refuses the request as too long gets it once more with the history budget halved
(`budget_cap`). When the history is down to its floor and the request is still over, the memory
block gives up its least relevant memories.
"""
from dataclasses import replace

from .assemble import Allotment, Policy, assemble

MIN_BUDGET = 64  # the newest turn is kept whatever the budget (strategies.py)


def room_for_plan(window: int | None, fixed_tokens: int) -> int | None:
    """Tokens the assembled sections may take: the window less what is not planned."""
    return None if not window else window - fixed_tokens


def history_room(plan, room: int) -> int:
    """The budget the window leaves the summary and the history: `room` less every other section
    (the system prompt, the memory block). It never depends on the summary, so the fold can ask
    the same question (request.fitted_policy) without its answer moving with what it writes."""
    return room - sum(s.tokens for s in plan.sections if s.name not in ("summary", "history"))


def cut(policy: Policy, window: int | None, budget: int) -> Allotment:
    """The policy with its budget lowered to fit the window, which each dropped turn names."""
    allotment = Allotment.of(policy)
    return replace(allotment, budget=max(budget, MIN_BUDGET), window=window,
                   budget_set=allotment.budget_set or allotment.budget)


def fit(conversation, config, before_seq: int | None, window: int | None, fixed_tokens: int,
        budget_cap: int | None = None, policy: Policy | None = None):
    """The plan for the next request, inside `window` once `fixed_tokens` are set aside; a
    refused request is planned again with `budget_cap` (half the budget it had). Called by
    request.plan_request, the one planner."""
    policy = policy or Policy.for_conversation(conversation, config)
    if budget_cap is not None:
        policy = cut(policy, window, min(policy.budget, budget_cap))
    plan = assemble(conversation, config, policy=policy, before_seq=before_seq)
    room = room_for_plan(window, fixed_tokens)
    if room is not None and history_room(plan, room) < policy.budget:
        policy = cut(policy, window, history_room(plan, room))
        plan = assemble(conversation, config, policy=policy, before_seq=before_seq)
    for _ in range(3):  # each pass takes out what the last one was over by
        if room is None or plan.total_tokens <= room or policy.budget <= MIN_BUDGET:
            break
        over = plan.total_tokens - room
        used = sum(s.tokens for s in plan.sections if s.name in ("history", "summary"))
        budget = min(policy.budget, used) - over - MIN_BUDGET // 2
        policy = cut(policy, window, budget)
        plan = assemble(conversation, config, policy=policy, before_seq=before_seq)
    memory = plan.section("memory")
    if room is not None and plan.total_tokens > room and memory is not None:
        room_left = memory.tokens - (plan.total_tokens - room)
        plan = assemble(conversation, config, policy=Allotment.of(policy, memory_room=room_left),
                        before_seq=before_seq)
    return plan
