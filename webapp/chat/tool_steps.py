"""How tool calls read in the chat: "Checking order #1043…" while they run, "Checked order #1043" after."""
import json
from dataclasses import dataclass

from ..plurals import plural

# Tool name: (while it runs, once it is done), filled from the call's arguments and its result.
LABELS = {
    "check_refund_eligibility": ("Checking order #{order_id}", "Checked order #{order_id}"),
    "lookup_order": ("Looking up order #{order_id}", "Looked up order #{order_id}"),
    "list_orders": ("Listing your orders", "Listed your orders"),
    "create_support_ticket": ("Opening a support ticket", "Opened ticket #{ticket_id}"),
    "list_tickets": ("Listing your tickets", "Listed your tickets"),
    "search_help_center": ("Searching the help center for “{query}”",
                           "Searched the help center for “{query}”"),
    "save_memory": ("Saving a memory", "Saved a memory"),
    "search_memories": ("Searching memories", "Searched memories"),
    "search_history": ("Searching earlier conversations", "Searched earlier conversations"),
}
# What a failed step says instead of its "done" label, where that label would claim success.
FAILED = {"save_memory": "Nothing saved"}
# Done labels that need a field the result may lack: the same voice without it.
WITHOUT_FIELDS = {"create_support_ticket": "Opened a support ticket"}


@dataclass
class ToolStep:
    name: str
    arguments: dict
    result: dict | None = None  # None while the tool runs

    @property
    def running(self) -> bool:
        return self.result is None

    @property
    def failed(self) -> bool:
        return isinstance(self.result, dict) and "error" in self.result

    @property
    def approval(self) -> dict | None:
        """The Yes / No question of a write the customer had not asked for (agent/approval.py)."""
        found = self.result.get("approval") if isinstance(self.result, dict) else None
        return found if isinstance(found, dict) and found.get("question") else None

    @property
    def label(self) -> str:
        """The sentence shown for this step; unknown tools and missing fields fall back to the name."""
        running, done = LABELS.get(self.name, ("Running {tool}", "Ran {tool}"))
        fields = {"tool": self.name.replace("_", " "), **self.arguments,
                  **(self.result if isinstance(self.result, dict) else {})}
        try:
            text = (running if self.running else done).format_map(fields)
        except (KeyError, IndexError, ValueError):
            text = WITHOUT_FIELDS.get(self.name) if not self.running else None
            text = text or ("Running " if self.running else "Ran ") + fields["tool"]
        if self.approval:
            return f"Asked you first: {self.approval['question']}"
        if self.failed and self.result.get("memory_off"):
            return "Nothing saved: you turned memory off"
        if self.failed:
            return f"{FAILED.get(self.name, text)}: {self.result['error']}"
        return text + ("…" if self.running else "")

    @property
    def detail(self) -> str:
        """What the tool found, in a few words, for the collapsed list under the answer."""
        result = self.result if isinstance(self.result, dict) else {}
        if self.failed or not result:
            return ""
        if "reason" in result:
            return str(result["reason"])
        if isinstance(result.get("orders"), list):
            return plural(len(result["orders"]), "order")
        if isinstance(result.get("tickets"), list):
            return plural(len(result["tickets"]), "ticket")
        if isinstance(result.get("results"), list):
            found = len(result["results"])
            return plural(found, "result")
        if "status" in result:
            return f"Status: {result['status']}"
        return ""


def parse_result(content: str) -> dict:
    try:
        result = json.loads(content)
    except (TypeError, json.JSONDecodeError):
        return {"text": content}
    return result if isinstance(result, dict) else {"value": result}


def steps_of(messages: list[dict]) -> list[ToolStep]:
    """A stored turn's tool calls, each with its result, in the order they ran."""
    results = {m["tool_call_id"]: parse_result(m["content"]) for m in messages if m["role"] == "tool"}
    return [ToolStep(call["name"], call.get("arguments") or {}, results.get(call["id"], {}))
            for m in messages if m["role"] == "assistant" for call in m.get("tool_calls") or []]
