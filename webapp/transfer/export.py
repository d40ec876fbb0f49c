"""Export a conversation: JSON that imports back exactly, or Markdown for people."""
import json

from sqlalchemy import select

from ..extensions import db
from ..llm.messages import final_answer
from ..memory.summaries import ConversationSummary
from ..models import Conversation, RequestText

FORMAT = "nimbus.conversation"
VERSION = 2  # 2: turns carry their pin or leave-out mark (version 1 files still import)
READS = (1, 2)
TURN_FIELDS = ("outcome", "trace", "prompt_tokens", "completion_tokens", "context_tokens",
               "resend_tokens", "manifest", "mark", "marked_by_name")


def export_conversation(conversation: Conversation) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "id": conversation.id, "title": conversation.title,
        "strategy": conversation.strategy, "settings": conversation.settings or {},
        "created_at": conversation.created_at.isoformat(),
        "turns": [{"messages": t.messages, "created_at": t.created_at.isoformat(),
                   **{f: getattr(t, f) for f in TURN_FIELDS},
                   "marked_at": t.marked_at.isoformat() if t.marked_at else None}
                  for t in conversation.turns],
        "summaries": [{"style": s.style, "text": s.text, "through_seq": s.through_seq,
                       "topics": list(s.topics or []), "edited_by_name": s.edited_by_name,
                       "edited_at": s.edited_at.isoformat() if s.edited_at else None}
                      for s in db.session.scalars(select(ConversationSummary).where(
                          ConversationSummary.conversation_id == conversation.id))
                      if s.through_seq >= 0],
        # The texts the turns' request manifests refer to by hash (webapp/memory/manifest.py).
        "request_texts": dict(db.session.execute(
            select(RequestText.hash, RequestText.text)
            .where(RequestText.conversation_id == conversation.id)).all()),
    }


def export_markdown(conversation: Conversation) -> str:
    lines = [f"# {conversation.title}", "", f"Conversation `{conversation.id}`", ""]
    for turn in conversation.turns:
        lines += [f"## Turn {turn.seq + 1}", ""]
        if turn.question:  # an imported transcript may open with Nimbus speaking
            lines += [f"**Customer:** {turn.question}", ""]
        for m in turn.messages[1:]:
            for call in m.get("tool_calls") or []:
                lines.append(f"- *tool call* `{call['name']}({json.dumps(call['arguments'])})`")
            if m["role"] == "tool":
                lines.append(f"- *result* `{m['content'][:200]}`")
        lines += ["", f"**Nimbus:** {final_answer(turn.messages)}", ""]
    return "\n".join(lines)
