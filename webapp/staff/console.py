"""The console's query: a tenant's conversations newest first, filtered, searched, a page at a time.

Every figure comes from one statement: correlated subqueries over the (conversation, seq) index
for the last outcome and token totals, so a page costs the same however big the tenant is.
Full-text search reuses the keyword index of long-term memory (turns_fts / PostgreSQL GIN).
"""
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from sqlalchemy import exists, func, or_, select

from ..extensions import db
from ..memories import TURN_INDEX, TURN_TEXT, Indexed, scored
from ..models import Conversation, Turn, User
from ..security import whole_number

OUTCOMES = {"errors": ("api_error",), "interrupted": ("interrupted",),
            "step_limit": ("step_limit",)}
MAX_TURNS = 1_000_000
MAX_PAGE = 10_000
SEARCH_TURNS = 500  # best-matching turns considered by a search


class InvalidFilter(ValueError):
    """A filter value people can fix: the message says how."""


@dataclass
class Filters:
    customer: str = ""
    outcome: str = ""
    min_turns: int | None = None
    max_turns: int | None = None
    since: date | None = None
    until: date | None = None
    q: str = ""
    page: int = 1

    @classmethod
    def from_args(cls, args) -> "Filters":
        outcome = args.get("outcome", "")
        if outcome and outcome not in OUTCOMES:
            raise InvalidFilter(f"unknown outcome {outcome!r}; choose errors, interrupted or step_limit")
        return cls(customer=" ".join(args.get("customer", "").split())[:200], outcome=outcome,
                   min_turns=bounded(args, "min_turns", MAX_TURNS),
                   max_turns=bounded(args, "max_turns", MAX_TURNS),
                   since=day(args, "since"), until=day(args, "until"),
                   q=" ".join(args.get("q", "").split())[:200],
                   page=bounded(args, "page", MAX_PAGE, low=1) or 1)


def bounded(args, name: str, high: int, low: int = 0) -> int | None:
    value = args.get(name, "").strip()
    if not value:
        return None
    number = whole_number(value, low, high)
    if number is None:
        raise InvalidFilter(f"{name.replace('_', ' ')} must be a whole number from {low} to {high:,}")
    return number


def day(args, name: str) -> date | None:
    value = args.get(name, "").strip()
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        raise InvalidFilter(f"{name} must be a date like 2026-01-31") from None


def tenant_turn_ids(tenant_id: int, query: str, limit: int) -> list[int]:
    """Finished turns of any conversation of the tenant matching the query, best first (the
    tenant's own term statistics, as a customer's search uses theirs; newer first on a tie)."""
    def scoped(statement):
        return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
            Conversation.tenant_id == tenant_id, Conversation.deleted_at.is_(None),
            Turn.outcome != "pending")
    indexed = Indexed("turns_fts", Turn.id, TURN_TEXT, Turn.created_at,
                      (Turn.id, Turn.question, Turn.answer), scoped, **TURN_INDEX)
    scores, _ = scored(indexed, query, limit, lambda row: f"{row.question}\n{row.answer}")
    return sorted(scores, key=lambda turn_id: (-scores[turn_id], -turn_id))[:limit]


def conversation_page(tenant_id: int, filters: Filters, page_size: int) -> tuple[list, bool]:
    """(rows, more): each row a Conversation, its customer and figures; newest activity first."""
    of_it = Turn.conversation_id == Conversation.id
    last_outcome = (select(Turn.outcome).where(of_it).order_by(Turn.seq.desc()).limit(1)
                    .correlate(Conversation).scalar_subquery())
    sent = (select(func.coalesce(func.sum(func.coalesce(Turn.prompt_tokens, Turn.context_tokens)), 0))
            .where(of_it).correlate(Conversation).scalar_subquery())
    answered = (select(func.coalesce(func.sum(Turn.completion_tokens), 0)).where(of_it)
                .correlate(Conversation).scalar_subquery())
    query = (select(Conversation, User, last_outcome.label("last_outcome"), sent.label("sent"),
                    answered.label("answered"))
             .join(User, User.id == Conversation.user_id)
             .where(Conversation.tenant_id == tenant_id, Conversation.deleted_at.is_(None)))
    for condition in conditions(tenant_id, filters):
        query = query.where(condition)
    offset = (filters.page - 1) * page_size
    rows = db.session.execute(query.order_by(Conversation.updated_at.desc(), Conversation.id)
                              .offset(offset).limit(page_size + 1)).all()
    return rows[:page_size], len(rows) > page_size


def conditions(tenant_id: int, filters: Filters) -> list:
    found = []
    if filters.customer:
        pattern = f"%{filters.customer.lower()}%"
        found.append(or_(func.lower(User.email).like(pattern), func.lower(User.name).like(pattern)))
    if filters.outcome:
        found.append(exists().where(Turn.conversation_id == Conversation.id,
                                    Turn.outcome.in_(OUTCOMES[filters.outcome])))
    if filters.min_turns is not None:
        found.append(Conversation.turn_count >= filters.min_turns)
    if filters.max_turns is not None:
        found.append(Conversation.turn_count <= filters.max_turns)
    if filters.since:
        found.append(Conversation.updated_at >= datetime.combine(filters.since, time.min))
    if filters.until and filters.until < date.max:  # the last day there is has no end to compare
        found.append(Conversation.updated_at < datetime.combine(filters.until, time.min)
                     + timedelta(days=1))
    if filters.q:
        ids = tenant_turn_ids(tenant_id, filters.q, SEARCH_TURNS)
        found.append(Conversation.id.in_(
            select(Turn.conversation_id).where(Turn.id.in_(ids or [-1]))))
    return found
