"""Export a conversation: JSON that imports back exactly, or Markdown for people."""
import json
import re

from sqlalchemy import select

from ..plurals import plural
from ..extensions import db
from ..llm import final_answer
from ..context.summary.models import ConversationSummary
from ..models import Conversation, RequestText, TurnAlternative
from .memories import export_memories
from .schema import Settings

FORMAT = "nimbus.conversation"
# 2: turns carry their pin or leave-out mark; 3: their feedback; 4: the memories the conversation
# gave its owner, with their history; 5: the versions of turns not shown (regenerated answers,
# edited questions: webapp/branches.py) as "alternatives" (older files import)
VERSION = 5
READS = (1, 2, 3, 4, 5)
TURN_FIELDS = ("outcome", "trace", "prompt_tokens", "completion_tokens", "context_tokens",
               "resend_tokens", "manifest", "mark", "marked_by_name", "feedback", "feedback_comment")


def known_settings(settings: dict | None) -> dict:
    """The settings an import reads back; a key no policy reads (a demo database's "recent")
    would only make the file refused."""
    return {k: v for k, v in (settings or {}).items() if k in Settings.model_fields}


def export_conversation(conversation: Conversation) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "id": conversation.id, "title": conversation.title,
        "strategy": conversation.strategy, "settings": known_settings(conversation.settings),
        "created_at": conversation.created_at.isoformat(),
        **({"instructions": conversation.instructions} if conversation.instructions else {}),
        "turns": [{"messages": t.messages, "created_at": t.created_at.isoformat(),
                   **{f: getattr(t, f) for f in TURN_FIELDS},
                   "marked_at": t.marked_at.isoformat() if t.marked_at else None,
                   "feedback_at": t.feedback_at.isoformat() if t.feedback_at else None}
                  for t in conversation.turns],
        "summaries": [{"style": s.style, "text": s.text, "through_seq": s.through_seq,
                       "topics": list(s.topics or []), "edited_by_name": s.edited_by_name,
                       "edited_at": s.edited_at.isoformat() if s.edited_at else None}
                      for s in db.session.scalars(select(ConversationSummary).where(
                          ConversationSummary.conversation_id == conversation.id))
                      if s.through_seq >= 0],
        "memories": export_memories(conversation),
        "alternatives": [{"seq": a.seq, "position": a.position, "kind": a.kind,
                          **exported_branch(a.branch)}
                         for a in db.session.scalars(select(TurnAlternative).where(
                             TurnAlternative.conversation_id == conversation.id)
                             .order_by(TurnAlternative.seq, TurnAlternative.position))],
        # The texts the turns' request manifests refer to by hash (webapp/context/manifest.py).
        "request_texts": dict(db.session.execute(
            select(RequestText.hash, RequestText.text)
            .where(RequestText.conversation_id == conversation.id)).all()),
    }


def exported_branch(branch: dict) -> dict:
    """A kept branch as the file carries it: its turns and summaries as the active path's are
    written, the versions of its own turns within it; no row ids or people's ids."""
    return {
        "turns": [{"messages": t["messages"], "created_at": t.get("created_at"),
                   **{f: t.get(f) for f in TURN_FIELDS}, "marked_at": t.get("marked_at"),
                   "feedback_at": t.get("feedback_at")} for t in branch["turns"]],
        "summaries": [{k: s.get(k) for k in ("style", "text", "through_seq", "topics",
                                             "edited_by_name", "edited_at")}
                      for s in branch.get("summaries", []) if s.get("through_seq", -1) >= 0],
        "alternatives": [{"seq": a["seq"], "position": a["position"], "kind": a["kind"],
                          **exported_branch(a["branch"])} for a in branch.get("alternatives", [])],
    }


def openai_message(message: dict) -> dict:
    """A neutral message as the Chat Completions API takes it (what a test pastes in)."""
    if message["role"] == "assistant":
        out = {"role": "assistant", "content": message.get("content") or None}
        if message.get("tool_calls"):
            out["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
                for c in message["tool_calls"]]
        elif out["content"] is None:
            out["content"] = ""
        return out
    if message["role"] == "tool":
        return {"role": "tool", "tool_call_id": message["tool_call_id"],
                "content": message["content"]}
    return {"role": message["role"], "content": message["content"]}


def export_openai(conversation: Conversation) -> list[dict]:
    """The conversation as OpenAI chat messages: its instructions as the system message, then
    every turn's messages (an imported transcript's empty opening question left out)."""
    out = [{"role": "system", "content": conversation.instructions}] \
        if conversation.instructions else []
    for turn in conversation.turns:
        messages = turn.messages
        if turn.seq == 0 and not messages[0]["content"] and len(messages) > 1:
            messages = messages[1:]
        out += [openai_message(m) for m in messages]
    return out


def assistant_name(conversation: Conversation) -> str:
    return (conversation.tenant.settings or {}).get("assistant_name") or "Nimbus"


def export_markdown(conversation: Conversation) -> str:
    """Title, date, then each question under `### Customer` and each answer under the
    assistant's name, tool steps folded into <details>."""
    name = assistant_name(conversation)
    lines = [f"# {conversation.title}", "",
             f"{conversation.created_at:%Y-%m-%d %H:%M} UTC · conversation `{conversation.id}`", ""]
    if conversation.instructions:
        lines += ["<details><summary>Instructions</summary>", "",
                  *quoted(conversation.instructions), "", "</details>", ""]
    from ..branches import versions
    branched = versions(conversation.id)  # one small query: most turns have no other version
    for turn in conversation.turns:
        if turn.question:  # an imported transcript may open with Nimbus speaking
            lines += ["### Customer", "", turn.question, ""]
        steps = tool_steps(turn.messages)
        answer = final_answer(turn.messages)
        if steps or answer:
            lines += [f"### {name}", ""]
        if steps:
            calls = sum(len(m.get("tool_calls") or []) for m in turn.messages)
            lines += [f"<details><summary>{plural(calls, 'tool call')}</summary>", "", *steps, "",
                      "</details>", ""]
        if answer:
            lines += [answer, ""]
        if turn.seq in branched:
            lines += other_versions(turn)
    return "\n".join(lines)


def other_versions(turn) -> list[str]:
    """A turn's versions that are not shown (regenerated, edited away), folded under it: the
    Markdown is the path shown, and says what else was asked and answered there."""
    from ..branches import alternatives_of
    others = alternatives_of(turn.conversation_id, turn.seq)
    lines = [f"<details><summary>{plural(len(others), 'other version')} of this turn "
             "(not sent)</summary>", ""]
    for other in others:
        more = f", and {plural(other.later, 'more turn')} of its branch" if other.later else ""
        lines += [f"**Alternative {other.position} of {other.total}**{more}", ""]
        question = other.messages[0].get("content") or ""
        if other.kind == "question" and question:
            lines += ["Customer:", "", *quoted(question), ""]
        if answer := final_answer(other.messages):
            lines += [*quoted(answer), ""]
    return lines + ["</details>", ""]


def quoted(text: str) -> list[str]:
    return ["> " + line for line in text.splitlines()]


RESULT_CHARS = 4000  # of one tool result in a Markdown export; the JSON export keeps it whole


def tool_steps(messages: list[dict]) -> list[str]:
    """Each tool call as a line and each result as one fenced block, in the order they happened:
    a result's lines (a `#`, a list, its own ``` fences) stay its text, never the page's."""
    lines = []
    for m in messages[1:]:
        for call in m.get("tool_calls") or []:
            arguments = json.dumps(call["arguments"], ensure_ascii=False)
            lines += [f"Called {inline_code(call['name'] + '(' + arguments + ')')}", ""]
        if m["role"] == "tool":
            result = m["content"]
            lines += [f"Result of {inline_code(m['name'])}:", "", *fenced(result[:RESULT_CHARS])]
            if len(result) > RESULT_CHARS:
                lines.append(f"(cut here: {len(result) - RESULT_CHARS:,} more characters)")
            lines.append("")
    return lines[:-1]


def longest_run(text: str, char: str = "`") -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)


def fenced(text: str) -> list[str]:
    """A code block whose fence is longer than any run of backticks inside it (CommonMark ends
    a fenced block only at a fence at least as long as its opening one)."""
    fence = "`" * max(3, longest_run(text) + 1)
    return [f"{fence}text", *(text.splitlines() or [""]), fence]


def inline_code(text: str) -> str:
    """Inline code that holds backticks: a longer delimiter, padded when the text touches it."""
    text = " ".join(text.splitlines())
    tick = "`" * (longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"
