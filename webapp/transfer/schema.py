"""The export format as a schema: what an imported file must be before anything is written.

Strict types (no "abc" for a number, no 1e30 for a count), ranges that fit the columns, the
strategies and settings the app knows, outcomes a finished turn can have, and whole turns: one
question first, every tool call answered once, by name, with ids unique in the turn.
"""
import json
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field,
                      field_validator, model_validator)

from ..context import STRATEGIES, STYLES

INT32 = 2**31 - 1  # token counts are INTEGER columns
# One imported message at most: 25 times the chat's NIMBUS_MAX_MESSAGE_CHARS, room for a pasted
# document or a long tool result, while a 10 MB message is refused before it reaches a page.
MESSAGE_CHARS = 200_000
# "pending" is never finished; "unanswered": an imported question the file holds no answer to.
OUTCOMES = ("answered", "api_error", "step_limit", "interrupted", "cut_off", "unanswered")


def iso_time(value) -> datetime:
    """An ISO 8601 string (a number or anything else is refused: it is ambiguous)."""
    if not isinstance(value, str):
        raise ValueError("expected an ISO 8601 date and time, like 2026-11-30T10:00:00")
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value[:40]!r} is not an ISO 8601 date and time") from None


def to_utc(moment: datetime) -> datetime:
    """Naive UTC, as every timestamp is stored; an offset is converted, not dropped."""
    try:
        return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment
    except OverflowError:  # 0001-01-01T00:00+05:00 is before year 1 in UTC
        raise ValueError(f"{moment.isoformat()} is out of range once converted to UTC") from None


def bounded_text(value: str) -> str:
    """Refuse a message longer than any conversation needs (the chat's own limit is far lower)."""
    if len(value) > MESSAGE_CHARS:
        raise ValueError(f"the text is {len(value):,} characters; an imported message holds at "
                         f"most {MESSAGE_CHARS:,}")
    return value


Timestamp = Annotated[datetime, BeforeValidator(iso_time), AfterValidator(to_utc)]
Count = Annotated[int, Field(ge=0, le=INT32)]
Content = Annotated[str, AfterValidator(bounded_text)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class ToolCall(Strict):
    id: Name
    name: Name
    arguments: dict[str, Any]


class UserMessage(Strict):
    role: Literal["user"]
    content: Content


class AssistantMessage(Strict):
    role: Literal["assistant"]
    content: Content | None = ""
    tool_calls: list[ToolCall] | None = None
    provider_raw: dict[str, Any] | None = None
    notice: str | None = None  # Nimbus's own words ending a failed reply: shown, never resent

    @field_validator("provider_raw")
    @classmethod
    def an_assistant_message(cls, value):
        """It is resent in place of this message: anything but the assistant's own turn (a
        "system" message, say) would speak to the model with another voice."""
        if value is not None:
            if value.get("role") != "assistant":
                raise ValueError(f"the provider's message must have role 'assistant', not "
                                 f"{str(value.get('role'))[:20]!r}")
            bounded_text(json.dumps(value, ensure_ascii=False))
        return value


class ToolMessage(Strict):
    role: Literal["tool"]
    tool_call_id: Name
    name: Name
    content: Content


Message = Annotated[UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]


class TraceStep(Strict):
    model_config = ConfigDict(extra="allow")  # tool, arguments, result, error…: shown as given
    kind: Annotated[str, Field(min_length=1, max_length=40)]
    step: Count = 0
    line: str = ""
    ms: Annotated[float, Field(ge=0, le=1e9)] | None = None


Text = Annotated[str, Field(max_length=10_000)]
Hash = Annotated[str, Field(pattern=r"^[0-9a-f]{16,64}$")]


def from_list(value):
    """JSON has no tuples: a fixed-length list stands for one."""
    return tuple(value) if isinstance(value, list) else value


def Row(*types):  # noqa: N802  a JSON array of fixed length and types
    return Annotated[tuple[types], BeforeValidator(from_list)]


class SentMessage(Strict):
    model_config = ConfigDict(extra="allow")  # the message's other keys, as sent
    role: Literal["system", "user", "assistant", "tool"]
    hash: Hash


class SentSection(Strict):
    """One section of a request manifest (webapp/context/manifest.py): texts by hash, history by seq."""
    name: Annotated[str, Field(min_length=1, max_length=40)]
    tokens: Count = 0
    messages: list[SentMessage] = []
    turns: list[Row(Count, Literal["full", "compact"], Hash)] = []
    memory_ids: list[Count | None] = []
    memory_why: list[Annotated[str, Field(max_length=200)]] = []  # why each was recalled
    through_seq: Count | None = None
    style: Text | None = None
    mode: Text | None = None


class SentCall(Strict):
    messages: Count
    estimated_tokens: Count = 0
    tool_tokens: Count = 0  # the tool specs' estimate, counted apart from the messages
    prompt_tokens: Count | None = None


class Manifest(Strict):
    """What each model call of the turn received, as the viewer rebuilds it."""
    version: Literal[1]
    ratio: Annotated[float, Field(gt=0, le=1000)] = 1.0
    strategy: Text
    budget: Count
    history_budget: Count = 0
    sections: list[SentSection]
    fates: list[Row(Count, Text, Text)] = []
    older: Row(Text, Text) | None = None
    marks: list[Row(Count, Text, Text)] = []  # pinned and left-out turns
    tools: list[Name] | None = None  # the tools sent, by name (absent before they were recorded)
    tools_left_out: list[Name] = []  # those the model's window left out
    calls: list[SentCall] = []


class TurnRecord(Strict):
    messages: Annotated[list[Message], Field(min_length=1)]
    created_at: Timestamp | None = None
    outcome: Literal[OUTCOMES] = "answered"
    trace: list[TraceStep] = []
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    context_tokens: Count = 0
    resend_tokens: Count = 0
    manifest: Manifest | None = None  # what the turn's model calls received
    mark: Literal["pinned", "excluded"] | None = None  # version 2: Keep in context / Leave out
    marked_by_name: Annotated[str, Field(max_length=200)] = ""
    marked_at: Timestamp | None = None
    feedback: Literal["up", "down"] | None = None  # version 3: the owner's thumbs on the answer
    feedback_comment: Annotated[str, Field(max_length=500)] = ""
    feedback_at: Timestamp | None = None

    @field_validator("outcome", mode="before")
    @classmethod
    def finished(cls, value):
        if value == "pending":
            raise ValueError("a stored turn is finished: outcome 'pending' cannot be imported")
        return value

    @model_validator(mode="after")
    def whole(self):
        """One question first; every tool call answered once, by its name, after it was made."""
        roles = [m.role for m in self.messages]
        if roles[0] != "user":
            raise ValueError("a turn must start with a user message")
        if "user" in roles[1:]:
            raise ValueError("a turn holds exactly one user message")
        calls: dict[str, str] = {}
        answered: set[str] = set()
        for i, m in enumerate(self.messages, 1):
            for call in getattr(m, "tool_calls", None) or []:
                if call.id in calls:
                    raise ValueError(f"message {i}: tool call id {call.id!r} is used twice")
                calls[call.id] = call.name
            if m.role == "tool":
                if m.tool_call_id not in calls:
                    raise ValueError(f"message {i}: tool result without a matching tool call")
                if m.tool_call_id in answered:
                    raise ValueError(f"message {i}: tool call {m.tool_call_id!r} has two results")
                if m.name != calls[m.tool_call_id]:
                    raise ValueError(f"message {i}: the result of {m.tool_call_id!r} is named "
                                     f"{m.name!r}, but the call was to {calls[m.tool_call_id]!r}")
                answered.add(m.tool_call_id)
        if missing := [c for c in calls if c not in answered]:
            raise ValueError(f"tool call {missing[0]!r} without a result")
        return self


class Settings(Strict):
    budget: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    recent_turns: Annotated[int, Field(ge=0, le=100)] | None = None
    max_age_days: Annotated[float, Field(gt=0, le=36_500)] | None = None
    candidate_pool: Annotated[int, Field(ge=1, le=100_000)] | None = None
    summary_style: str | None = None
    summarize_through: Annotated[int, Field(ge=-1, le=INT32)] | None = None  # Summarize up to here
    fold_after_turns: Annotated[int, Field(ge=1, le=100)] | None = None  # turns that wait per fold

    @field_validator("summary_style")
    @classmethod
    def known_style(cls, value):
        if value is not None and value not in STYLES:
            raise ValueError(f"unknown summary style {value!r}; choose from {', '.join(STYLES)}")
        return value


class SummaryRecord(Strict):
    style: str
    text: Annotated[str, Field(max_length=100_000)]
    through_seq: Annotated[int, Field(ge=-1, le=INT32)]
    topics: list[Annotated[str, Field(max_length=200)]] = []
    edited_by_name: Annotated[str, Field(max_length=200)] = ""
    edited_at: Timestamp | None = None

    @field_validator("style")
    @classmethod
    def known_style(cls, value):
        if value not in STYLES:
            raise ValueError(f"unknown summary style {value!r}; choose from {', '.join(STYLES)}")
        return value


MemoryText = Annotated[str, Field(min_length=1, max_length=500)]  # store.MAX_MEMORY_CHARS


class MemoryChange(Strict):
    """What a memory said before one change, who or what changed it and why (oldest first)."""
    action: Literal["edited", "superseded", "merged"]
    content: MemoryText
    changed_by: Literal["person", "staff", "distiller", "shell"]
    reason: Annotated[str, Field(max_length=200)] = ""
    turn_seq: Annotated[int, Field(ge=0, le=INT32)] | None = None  # of this conversation
    created_at: Timestamp | None = None


class MemoryRecord(Strict):
    """A memory this conversation gave its owner (version 4), with its history."""
    content: MemoryText
    source: Literal["distilled", "tool", "hand"]
    scope: Literal["workspace", "account", "order"] = "workspace"
    order_number: Annotated[int, Field(ge=0, le=INT32)] | None = None
    shared: bool = False  # shared with everyone helping with the account or order
    turn_seq: Annotated[int, Field(ge=0, le=INT32)] | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    history: list[MemoryChange] = []

    @model_validator(mode="after")
    def placed(self):
        if self.scope == "order" and self.order_number is None:
            raise ValueError("a memory about an order needs its order_number")
        if self.scope == "workspace" and self.shared:
            raise ValueError("a shop-wide shared memory is the shop's, not the conversation's")
        return self


class AlternativeRecord(Strict):
    """A version of turn `seq` that was not the one shown (version 5): its branch's turns from
    `seq` on, the versions of those turns, and the rolling summary that covered them."""
    seq: Annotated[int, Field(ge=0, le=INT32)]
    position: Annotated[int, Field(ge=1, le=10_000)]  # its place among the turn's versions
    kind: Literal["answer", "question"]
    turns: Annotated[list[TurnRecord], Field(min_length=1, max_length=100_000)]
    alternatives: list["AlternativeRecord"] = []
    summaries: list[SummaryRecord] = []

    @model_validator(mode="after")
    def placed(self):
        check_versions(self.alternatives, self.seq + 1, self.seq + len(self.turns))
        return self


def check_versions(alternatives: list[AlternativeRecord], first: int, end: int) -> None:
    """Each version leaves the path at one of its turns (first ≤ seq < end), and the versions
    of a turn hold distinct places with one free for the version shown."""
    places: dict[int, set[int]] = {}
    for alternative in alternatives:
        if not first <= alternative.seq < end:
            raise ValueError(f"an alternative of turn {alternative.seq + 1} leaves a branch that "
                             f"has no such turn")
        places.setdefault(alternative.seq, set())
        if alternative.position in places[alternative.seq]:
            raise ValueError(f"turn {alternative.seq + 1} has two alternatives at place "
                             f"{alternative.position}")
        places[alternative.seq].add(alternative.position)
    for seq, taken in places.items():
        if max(taken) > len(taken) + 1:
            raise ValueError(f"the alternatives of turn {seq + 1} leave more than one place free")


class ConversationExport(Strict):
    format: Literal["nimbus.conversation"]
    version: Literal[1, 2, 3, 4, 5]
    id: str | None = None  # an import always gets a new id
    title: str | None = None
    strategy: str = "compact"
    settings: Settings = Settings()
    created_at: Timestamp | None = None
    instructions: Content | None = None  # the system message it was imported with
    turns: Annotated[list[TurnRecord], Field(min_length=1, max_length=100_000)]
    request_texts: dict[str, str] = {}  # the manifests' texts by hash
    summaries: list[SummaryRecord] = []  # version 2: the rolling summaries, hand edits marked
    memories: list[MemoryRecord] = []  # version 4: what it taught about its owner, with history
    alternatives: list[AlternativeRecord] = []  # version 5: regenerated answers, edited questions

    @model_validator(mode="after")
    def versions_placed(self):
        check_versions(self.alternatives, 0, len(self.turns))
        return self

    @field_validator("strategy")
    @classmethod
    def known_strategy(cls, value):
        if value not in STRATEGIES:
            raise ValueError(f"unknown strategy {value!r}; choose from {', '.join(STRATEGIES)}")
        return value


class PlainMessage(BaseModel):
    """A message of a plain transcript: its role and optional time; the keys its role has in the
    neutral format (NEUTRAL_KEYS) are checked as a turn's, the rest (ids, metadata) left out."""
    model_config = ConfigDict(strict=True, extra="ignore")
    role: Literal["system", "user", "assistant", "tool"]
    created_at: Timestamp | None = None


NEUTRAL_KEYS = {"system": ("role", "content"), "user": ("role", "content"),
                "assistant": ("role", "content", "tool_calls", "provider_raw", "notice"),
                "tool": ("role", "tool_call_id", "name", "content")}
