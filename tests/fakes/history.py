"""Long conversations for page tests and benches: answered turns inserted in bulk."""
from sqlalchemy import insert

from webapp.extensions import db
from webapp.llm.messages import assistant_message, compact_turn, user_message
from webapp.models import Conversation, Turn


def fill_conversation(conversation: Conversation, turns: int, start: int = 0) -> None:
    """Add `turns` answered turns numbered from `start` (question "Question N", answer "Answer N")."""
    rows = []
    for seq in range(start, start + turns):
        messages = [user_message(f"Question {seq}"), assistant_message(f"Answer {seq}.")]
        rows.append({"conversation_id": conversation.id, "seq": seq, "messages": messages,
                     "compact": compact_turn(messages), "question": f"Question {seq}",
                     "answer": f"Answer {seq}.", "outcome": "answered", "trace": []})
    for chunk in range(0, len(rows), 1000):
        db.session.execute(insert(Turn), rows[chunk:chunk + 1000])
    conversation.turn_count = start + turns
    db.session.commit()
