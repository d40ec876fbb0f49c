"""The LoCoMo corpus read as Nimbus history, so recall can be checked on real multi-session chats.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL
2024; github.com/snap-research/locomo) holds 10 two-person conversations of 19-32 dated sessions
each, and about 2,000 questions whose `evidence` names the dialogue lines (dia_id "D3:5") that
answer them. It is not shipped with Nimbus: a bench takes its path (locomo10.json, the release's
locomo10.zip, or a folder of its per-conversation files; see docs/memory.md).

Each conversation becomes one Nimbus person, each session one conversation, each two consecutive
lines one turn (the first as the question, the second as the answer; an odd last line is a turn
of its own, unanswered), dated at the session's time plus a minute per turn. A line's
shared photo is kept as its caption, the only text the release has of it.
"""
import glob
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta

# The categories as the authors' evaluation code treats them (task_eval/evaluation.py: 2 gets
# "use the date of the conversation", 5 is answered "not mentioned", 3 allows several answers).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DIA_ID = re.compile(r"D:?(\d+):(\d+)")  # "D:11:26" occurs too
SESSION = re.compile(r"session_(\d+)")


@dataclass
class Turn:
    question: str
    answer: str
    dia_ids: list[str]
    created_at: datetime


@dataclass
class Question:
    category: int
    text: str
    evidence: list[str]  # dia_ids, as normalised "D<session>:<line>"


@dataclass
class Sample:
    id: str
    speakers: tuple[str, str]
    sessions: list[list[Turn]]
    questions: list[Question] = field(default_factory=list)

    def turn_of(self) -> dict[str, tuple[int, int]]:
        """(session index, turn index) of every dia_id."""
        return {dia: (s, t) for s, session in enumerate(self.sessions)
                for t, turn in enumerate(session) for dia in turn.dia_ids}


def records(path: str) -> list[tuple[str, dict]]:
    """(name, record) of every conversation in locomo10.json, the zip or a folder of files."""
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "**", "*.json"), recursive=True))
        return [found for p in files for found in named(p, read_json(p))]
    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            return [found for name in sorted(archive.namelist()) if name.endswith(".json")
                    for found in named(name, json.loads(archive.read(name)))]
    return named(path, read_json(path))


def read_json(path: str):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def named(path: str, data) -> list[tuple[str, dict]]:
    """A file's conversations: a list of them (locomo10.json) or one, named by the file."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if isinstance(data, list):
        return [(str(r.get("sample_id", f"{stem}-{i}")), r) for i, r in enumerate(data)]
    return [(str(data.get("sample_id", stem)), data)]


def when(text: str) -> datetime:
    """A session's time as LoCoMo writes it: "1:56 pm on 8 May, 2023"."""
    return datetime.strptime(re.sub(r"\s+", " ", text.strip()), "%I:%M %p on %d %B, %Y")


def line_text(line: dict) -> str:
    caption = line.get("blip_caption")
    return f"{line['text']} [shares a photo: {caption}]" if caption else line["text"]


def sample(name: str, record: dict) -> Sample:
    """One conversation: the `conversation` of a locomo10.json entry, or a per-file record."""
    conversation = record.get("conversation", record)
    numbers = sorted(int(m.group(1)) for k in conversation
                     if (m := SESSION.fullmatch(k)) and conversation[k])
    sessions = []
    for n in numbers:
        lines, start = conversation[f"session_{n}"], when(conversation[f"session_{n}_date_time"])
        sessions.append([Turn(line_text(lines[i]),
                              line_text(lines[i + 1]) if i + 1 < len(lines) else "",
                              [normal(line["dia_id"]) for line in lines[i:i + 2]],
                              start + timedelta(minutes=i // 2))
                         for i in range(0, len(lines), 2)])
    questions = [Question(qa["category"], qa["question"], [
        f"D{int(s)}:{int(n)}" for s, n in DIA_ID.findall(" ".join(qa.get("evidence", [])))])
        for qa in record.get("qa", [])]
    speakers = (conversation["speaker_a"], conversation["speaker_b"])
    return Sample(name, speakers, sessions, questions)


def normal(dia_id: str) -> str:
    found = DIA_ID.search(dia_id)
    return f"D{int(found.group(1))}:{int(found.group(2))}" if found else dia_id


def load(path: str) -> list[Sample]:
    return [sample(name, record) for name, record in records(path)]


def import_file(session: list[Turn]) -> dict:
    """A session as a Nimbus conversation file, for `import_conversation` (as `flask import`)."""
    from webapp.llm.messages import assistant_message, user_message
    from webapp.transfer import FORMAT, VERSION
    return {"format": FORMAT, "version": VERSION, "title": session[0].question[:60],
            "turns": [{"messages": [user_message(t.question),
                                    *([assistant_message(t.answer)] if t.answer else [])],
                       "created_at": t.created_at.isoformat()} for t in session]}
