"""The request as it was sent: per turn, a compact manifest of what each model call received —
hashes of the texts (system prompt, memory block, summary), the memories' ids, the summary's
reach, every history turn's fate and form, token counts — never a second copy of the history.

The texts themselves are kept once per conversation in `request_texts`, keyed by their hash, so
a summary or memory block that later changed can still be shown as it was (webapp/viewer/as_sent.py).
"""
import hashlib
import json

from sqlalchemy.dialects import postgresql, sqlite

from ..extensions import db
from ..llm import estimate_messages
from ..models import RequestText
from .plans import FULL, ContextPlan

VERSION = 1
FORMS = {FULL: "full", "COMPACTED": "compact"}  # which stored column a history turn was sent from


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def messages_hash(messages: list[dict]) -> str:
    """Of a turn's messages as sent, to tell later whether the stored turn still reads the same."""
    return text_hash(json.dumps(messages, sort_keys=True, ensure_ascii=False))[:16]


def section_entry(section, texts: dict) -> dict:
    entry = {"name": section.name, "tokens": section.tokens, "messages": []}
    for message in section.messages:
        content = message.get("content") or ""
        texts[text_hash(content)] = content
        entry["messages"].append({**{k: v for k, v in message.items() if k != "content"},
                                  "hash": text_hash(content)})
    detail = section.detail or {}
    if "memories" in detail:
        memories = [m for m in detail["memories"] if isinstance(m, dict)]
        entry["memory_ids"] = [m.get("id") for m in memories]
        entry["memory_why"] = [str(m.get("why") or "")[:200] for m in memories]
    for key in ("through_seq", "style", "mode", "left_out_to_fit", "shortened"):
        if detail.get(key) is not None:
            entry[key] = detail[key]
    return entry


def memories_sent(manifest: dict | None) -> list[tuple[int, str]] | None:
    """(memory id, why it was recalled) of each memory the request carried, in the block's
    order; None for a turn recorded without a manifest."""
    if not manifest or not isinstance(manifest.get("sections"), list):
        return None
    for section in manifest["sections"]:
        if isinstance(section, dict) and section.get("name") == "memory":
            ids = [i for i in section.get("memory_ids") or [] if isinstance(i, int)]
            why = list(section.get("memory_why") or [])
            return [(id_, why[n] if n < len(why) else "") for n, id_ in enumerate(ids)]
    return []


def memory_count(manifest: dict | None) -> int | None:
    """How many memories the request carried: the chat's "Used N memories", the viewer's too."""
    sent = memories_sent(manifest)
    return None if sent is None else len(sent)


class ManifestRecorder:
    """Built from the turn's plan; the agent loop reports each model call and stores the result."""

    def __init__(self, plan: ContextPlan, conversation_id: str):
        self.plan, self.conversation_id, self.texts, self.calls = plan, conversation_id, {}, []
        self.sections = []
        for section in plan.sections:
            if section.name == "history":
                self.sections.append({"name": "history", "tokens": section.tokens, "turns": [
                    [f.seq, FORMS.get(f.fate) or f.form, messages_hash(f.messages)]
                    for f in plan.history.kept()]})
            else:
                self.sections.append(section_entry(section, self.texts))
        fates = plan.history.fates
        self.fates = [[f.seq, f.fate, f.reason] for f in fates]
        self.older = list(plan.history.fate_of_older(fates[0].seq - 1)) if fates and fates[0].seq else None
        # Pinned and left-out turns, at any age: what the chat's notes compare turn to turn.
        self.marks = [[f.seq, f.fate, f.reason] for _, f in sorted(plan.history.marks.items())]
        # The tools the request carried, by name, and those its window left out (fit_tools).
        shape = getattr(plan, "shape", None)
        self.tools = {"tools": shape.tools, **({"tools_left_out": shape.tools_left_out}
                                               if shape.tools_left_out else {})} if shape else {}

    def call(self, turn_messages: list[dict], tool_tokens: int = 0) -> None:
        """A model call is about to receive the plan's messages plus these of the turn itself,
        and the tool specs (`tool_tokens`, estimated: the provider counts them in its prompt)."""
        estimated = self.plan.total_tokens + estimate_messages(turn_messages)
        self.calls.append({"messages": len(turn_messages), "estimated_tokens": estimated,
                           "prompt_tokens": None,
                           **({"tool_tokens": tool_tokens} if tool_tokens else {})})

    def reported(self, usage: dict | None) -> None:
        if self.calls and usage:
            self.calls[-1]["prompt_tokens"] = usage.get("prompt_tokens")

    @property
    def context_tokens(self) -> int:
        """Estimated prompt tokens over every model call of the turn."""
        return sum(c["estimated_tokens"] for c in self.calls)

    def resend_tokens(self, history_tokens: int) -> int:
        """The same calls had every stored turn been sent in place of the history and summary."""
        replaced = sum(s.tokens for s in self.plan.sections if s.name in ("history", "summary"))
        return self.context_tokens + len(self.calls) * (round(history_tokens * self.plan.ratio)
                                                        - replaced)

    @property
    def data(self) -> dict:
        return {"version": VERSION, "ratio": self.plan.ratio, "strategy": self.plan.policy.strategy,
                "budget": self.plan.policy.budget, "history_budget": self.plan.policy.history_budget,
                "sections": self.sections, "fates": self.fates, "older": self.older,
                **({"marks": self.marks} if self.marks else {}), **self.tools,
                "calls": self.calls}

    def store_texts(self) -> None:
        """Keep each text once per conversation (a second worker storing the same is harmless)."""
        store_texts(self.conversation_id, self.texts)


def store_texts(conversation_id: str, texts: dict[str, str]) -> None:
    if not texts:
        return
    dialect = postgresql if db.engine.dialect.name == "postgresql" else sqlite
    rows = [{"conversation_id": conversation_id, "hash": h, "text": t} for h, t in texts.items()]
    db.session.execute(dialect.insert(RequestText).values(rows).on_conflict_do_nothing())
