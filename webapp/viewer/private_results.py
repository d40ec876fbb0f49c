"""What a shared page or a downloaded report may show of a turn's tool steps: never the text a
memory or another conversation lent it, only that the search ran; and of the memory section, only
how many memories went and their scopes."""
import json
from collections import Counter

# Tools whose results carry a memory's text or another conversation's text.
PRIVATE_TOOLS = frozenset({"search_memories", "search_history"})
HIDDEN = "(searched your memories — hidden on shared pages)"


def private_call_ids(messages: list[dict]) -> set[str]:
    return {call.get("id") for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
            for call in m.get("tool_calls") or [] if call.get("name") in PRIVATE_TOOLS}


def without_private_results(messages: list[dict]) -> list[dict]:
    """A copy of these messages with every private tool result replaced by the hidden notice."""
    ids = private_call_ids(messages)
    return [{**m, "content": json.dumps({"hidden": HIDDEN})}
            if isinstance(m, dict) and m.get("role") == "tool"
            and (m.get("tool_call_id") in ids or m.get("name") in PRIVATE_TOOLS) else m
            for m in messages]


def without_private_trace(trace: list[dict]) -> list[dict]:
    return [{**t, "result": {"hidden": HIDDEN}, "line": f"tool  ← {HIDDEN}"}
            if t.get("kind") == "tool_result" and t.get("tool") in PRIVATE_TOOLS else t
            for t in trace]


def hide_private_results(report) -> None:
    """Replace, in place on the report (never on the stored turns), each private tool result."""
    for row in report.rows:
        row.stored = without_private_results(row.stored)
        row.sent = without_private_results(row.sent)
        row.trace = without_private_trace(row.trace)
    for section in report.sections:
        section.messages = without_private_results(section.messages)


def hide_memories(report, show_shop_wide: bool) -> None:
    """The memory section as a link's holder may see it: how many memories the request carried
    and their scopes; the text only of shop-wide ones, and only if staff chose so. The block as
    sent goes, since it holds every memory's text."""
    for section in report.sections:
        if section.name != "memory":
            continue
        memories = section.detail.get("memories") or []
        scopes = Counter(str(m.get("scope", "")) for m in memories if isinstance(m, dict))
        shown = [m for m in memories if show_shop_wide and isinstance(m, dict) and m.get("shared")
                 and str(m.get("scope", "")).startswith("workspace")]  # the tenant's, nobody's own
        carried = f"{len(memories)} memories: " + ", ".join(
            f"{count} {scope}" for scope, count in sorted(scopes.items()))
        section.messages = []
        section.detail = {"memories": shown, "carried": carried,
                          "text shown": "shop-wide memories only" if show_shop_wide else "none"}
