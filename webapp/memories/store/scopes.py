"""The session's scopes in the app's own words: the workspace (tenant), the account, an order.

A session resolves the three axes from a conversation or a person: its tenant, the memorables it
may read (the customer's account and orders), and its subject (the person).
"""
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from sqlalchemy import and_, bindparam, or_, select

from ...extensions import db
from ...shop.models import Order
from ..models import Memory

TENANT_WORD = "workspace"  # the shop as a whole: memorable NULL
ACCOUNT, ORDER = "account", "order"
SCOPE_WORDS = (TENANT_WORD, ACCOUNT, ORDER)


class InvalidScope(ValueError):
    """A scope the session does not have: an unknown word, or an order that is not theirs."""


@dataclass(frozen=True)
class SessionScope:
    tenant_id: int
    subject_id: int | None
    subject_name: str = ""
    orders: dict[int, int] = field(default_factory=dict)  # order number -> order id

    @classmethod
    def for_user(cls, user) -> "SessionScope":
        rows = db.session.execute(select(Order.number, Order.id).where(
            Order.tenant_id == user.tenant_id, Order.customer_id == user.id))
        return cls(user.tenant_id, user.id, user.name, {number: id_ for number, id_ in rows})

    @classmethod
    def for_conversation(cls, conversation) -> "SessionScope":
        return cls.for_user(conversation.user)

    def words(self) -> list[str]:
        """The scopes this session can write to, as the distiller and the tools offer them."""
        return [TENANT_WORD, ACCOUNT] + ([ORDER] if self.orders else [])

    @cached_property
    def applies_clause(self):
        return self.applies()

    @property
    def shape(self) -> tuple[bool, bool]:
        """(with a person, with orders): sessions of one shape share their statements."""
        return self.subject_id is not None, bool(self.orders)

    def bound(self) -> tuple[tuple, object, dict]:
        """(form, condition, values): applies() with its values as bound parameters, so the
        statements of every session of one shape (with or without a person, with or without
        orders) are built once; branches_bound(*shape) gives the same in branches."""
        values = {"scope_tenant": self.tenant_id}
        if self.subject_id is not None:
            values["scope_subject"] = self.subject_id
        if self.orders:
            values["scope_orders"] = list(self.orders.values())
        return ("memories applying to", *self.shape), applies_bound(*self.shape), values

    def applies(self):
        """SQL condition: memories of this tenant, about it or this session's memorables,
        shared or for this person (its values written in)."""
        return scope_condition(self.tenant_id, self.subject_id,
                               list(self.orders.values()) or None)

    def place(self, word: str, personal: bool, order_number=None) -> dict:
        """Columns for a memory written to `word`: the word is the app's, the shape stays right."""
        word = (word or TENANT_WORD).strip().lower()
        subject_id = self.subject_id if personal else None
        if word == TENANT_WORD:
            return {"memorable_type": None, "memorable_id": None, "subject_id": subject_id}
        if word == ACCOUNT and self.subject_id is not None:
            return {"memorable_type": ACCOUNT, "memorable_id": self.subject_id,
                    "subject_id": subject_id}
        if word == ORDER:
            try:
                order_id = self.orders[int(str(order_number).lstrip("#"))]
            except (KeyError, TypeError, ValueError):
                raise InvalidScope(f"order {order_number!r} is not one of this customer's "
                                   "orders") from None
            return {"memorable_type": ORDER, "memorable_id": order_id, "subject_id": subject_id}
        raise InvalidScope(f"unknown scope {word!r}; choose from {', '.join(self.words())}")


def scope_label(memory: Memory) -> str:
    """How people read a memory's scope: 'workspace', 'account' or 'order #1042'."""
    if memory.memorable_type is None:
        return TENANT_WORD
    if memory.memorable_type == ORDER:
        order = db.session.get(Order, memory.memorable_id)
        return f"order #{order.number}" if order else "a deleted order"
    return memory.memorable_type


def scope_for_customer(memory: Memory) -> str:
    """A memory's scope in a customer's words: 'all your conversations', 'the whole shop', 'your
    account' or 'order #1042' (staff keep the scope words: 'workspace', 'account')."""
    if memory.memorable_type is None:
        return "the whole shop" if memory.shared else "all your conversations"
    if memory.memorable_type == ACCOUNT:
        return "your account"
    return scope_label(memory)


def applies_to(memory: Memory) -> str:
    """Who a memory is applied for, in the panel's words: 'only you' or everyone it covers."""
    if not memory.shared:
        return "Only you"
    if memory.memorable_type is None:
        return "Every customer of the shop"
    return f"Everyone helping with {'your account' if memory.memorable_type == ACCOUNT else scope_label(memory)}"


def describe(memory: Memory) -> str:
    return f"{scope_label(memory)} · {'shared' if memory.shared else 'personal'}"


@lru_cache(maxsize=4)
def applies_bound(with_person: bool, with_orders: bool):
    """SessionScope.applies() of one shape, its values bound (see SessionScope.bound)."""
    return or_(*(branch for branch, _ in branches_bound(with_person, with_orders)))


@lru_cache(maxsize=4)
def branches_bound(with_person: bool, with_orders: bool) -> tuple:
    """scope_branches() of one shape (see SessionScope.bound), its values bound."""
    return tuple(scope_branches(bindparam("scope_tenant"),
                                bindparam("scope_subject") if with_person else None,
                                bindparam("scope_orders", expanding=True) if with_orders else None))


def scope_condition(tenant, subject, orders):
    """The tenant's memories about it, the subject's account (if any) or the orders (if any),
    shared or the subject's: with values or bound parameters."""
    return or_(*(branch for branch, _ in scope_branches(tenant, subject, orders)))


def scope_branches(tenant, subject, orders) -> list[tuple]:
    """scope_condition() as disjoint (condition, in id order) pairs, one per (memorable, subject)
    pairing, each a range of ix_memories_scope: a person's memories are found without passing
    the shop's other customers' (the index of the tenant alone walked them all, newest first, on
    every reply). The orders' ranges are several, so not in id order: they are sorted."""
    memorable = [(and_(Memory.memorable_type.is_(None), Memory.memorable_id.is_(None)), True)]
    subjects = [Memory.subject_id.is_(None)]
    if subject is not None:
        memorable.append((and_(Memory.memorable_type == ACCOUNT, Memory.memorable_id == subject),
                          True))
        subjects.append(Memory.subject_id == subject)
    if orders is not None:
        memorable.append((and_(Memory.memorable_type == ORDER, Memory.memorable_id.in_(orders)),
                          False))
    return [(and_(Memory.tenant_id == tenant, about, whom), ordered)
            for about, ordered in memorable for whom in subjects]
