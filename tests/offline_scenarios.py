"""Natural multi-turn conversations with the offline model, shared by the tests and the bench.

Each scenario is one conversation of the demo customer (Alex: orders #1041 Rain jacket, #1042
Wireless headphones, #1043 Espresso grinder, #1044 Wool socks, #1045 Desk lamp), typed as people
type: typos, no order numbers, "it", "the other one", "yes please". An exchange is on topic when
the answer calls the tools it needs, says what it must and none of what would be off topic (an
introduction, a help article about something else). `notes` are memories Alex has beforehand.
"""
from dataclasses import dataclass, field

import secrets

from webapp.extensions import db
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.models import User
from webapp.shop.demo import give_demo_orders
from webapp.storage import create_conversation

from .support import ask

INTRODUCTION = "ask me about an order"  # the self-introduction: never an answer to a request


@dataclass(frozen=True)
class Say:
    text: str
    tools: tuple[str, ...] = ()  # each must be called
    says: tuple[str, ...] = ()  # each must be in the answer (any case)
    never: tuple[str, ...] = ()  # none may be

    def on_topic(self, answer: str, called: list[str]) -> bool:
        lowered = answer.lower()
        return (all(t in called for t in self.tools)
                and all(s.lower() in lowered for s in self.says)
                and not any(n.lower() in lowered for n in (*self.never, INTRODUCTION)))


@dataclass(frozen=True)
class Scenario:
    name: str
    exchanges: tuple[Say, ...]
    notes: tuple[str, ...] = field(default=())


SCENARIOS = [
    Scenario("refund, then the other order, then yes", (
        Say("Can I get a refund for order #1043?", ("check_refund_eligibility",), ("#1043", "14")),
        Say("and the other one?", ("list_orders",), ("#1042",), ("password",)),
        Say("yes please", ("create_support_ticket",), ("ticket #",)),
        Say("Thanks!", (), ("welcome",)),
    )),
    Scenario("returning the jacket by its name", (
        Say("I want to return my jacket", ("list_orders", "check_refund_eligibility"), ("#1041",)),
        Say("why not?", (), ("#1041",), ("help center",)),
        Say("ok, how do i send it back then", ("search_help_center",), ("return label",)),
        Say("thx", (), ("welcome",)),
    )),
    Scenario("headphones refund without a number", (
        Say("can i get my money back for the headphones", ("check_refund_eligibility",),
            ("#1042", "eligible")),
        Say("yes pls", ("create_support_ticket",), ("ticket #", "#1042")),
        Say("how long until the money is back?", ("search_help_center",), ("5 to 7",)),
    )),
    Scenario("where is my order, with a typo", (
        Say("wheres my order 1041", ("lookup_order",), ("#1041", "shipped")),
        Say("when will it arrive?", ("search_help_center",), ("business days",),
            ("password",)),
        Say("can I track it", ("search_help_center",), ("tracking",)),
    )),
    Scenario("listing orders then picking one", (
        Say("what orders do i have", ("list_orders",), ("#1041", "#1045")),
        Say("can i refund the grinder?", ("check_refund_eligibility",), ("#1043",)),
        Say("what about the socks", ("check_refund_eligibility",), ("#1044",)),
        Say("ok and the lamp?", ("check_refund_eligibility",), ("#1045", "already been refunded")),
    )),
    Scenario("tickets", (
        Say("Please open a ticket, my grinder makes a weird noise", ("create_support_ticket",),
            ("ticket #",)),
        Say("What tickets do I have open?", ("list_tickets",), ("ticket #",),
            ("refund policy",)),
        Say("thank you so much", (), ("welcome",)),
    )),
    Scenario("no tickets yet", (
        Say("do i have any open tickets?", ("list_tickets",), ("no open",)),
        Say("ok thanks", (), ("welcome",)),
    )),
    Scenario("a fact said earlier", (
        Say("Hi, my name is Alex and I live in Porto.", (), ("Alex",)),
        Say("What is my name?", (), ("Alex",), ("Porto",)),
        Say("Where do I live?", (), ("Porto",), ("your name",)),
    )),
    Scenario("memories from before, two people never mixed", (
        Say("whats my name", (), ("Alex",), ("Dara",)),
        Say("where do i live", (), ("Porto",), ("your name", "Dara", "Lisbon")),
        Say("how do I prefer to be contacted?", (), ("email",)),
    ), notes=("Name: Alex.", "Lives in Porto.", "Prefers email over phone.")),
    Scenario("asked before", (
        Say("What did I ask you about shipping before?", ("search_history",), (),
            ("help center says",)),
        Say("what did i say about refunds earlier", ("search_history",)),
    )),
    Scenario("remember, then use it", (
        Say("Remember that I prefer email over phone", ("save_memory",), ("email",)),
        Say("how do i prefer to be contacted?", (), ("email",)),
        Say("great thanks", (), ("welcome",)),
    )),
    Scenario("help questions with typos", (
        Say("how long does shiping take", ("search_help_center",), ("3 to 5",)),
        Say("and express?", ("search_help_center",), ("1 to 2",), ("password",)),
        Say("do you ship to canada", ("search_help_center",), ("Canada",)),
        Say("how much is it", ("search_help_center",), ("$19",)),
    )),
    Scenario("payment and gift cards", (
        Say("can i pay with paypal?", ("search_help_center",), ("PayPal",)),
        Say("do gift cards expire", ("search_help_center",), ("never expire",)),
    )),
    Scenario("cancel the pending order", (
        Say("I want to cancel my socks order", ("search_help_center",), ("cancel",)),
        Say("is it still pending?", ("lookup_order",), ("#1044", "pending")),
    )),
    Scenario("damaged item", (
        Say("my rain jacket arrived torn", ("search_help_center",), ("photo",)),
        Say("can you open a ticket for it", ("create_support_ticket",), ("ticket #", "#1041")),
    )),
    Scenario("greeting, then business", (
        Say("hey", (), ("Nimbus",)),
        Say("I need help with an order", (), ("which order",)),
        Say("the headphones", ("lookup_order",), ("#1042",)),
        Say("can i get a refund on it?", ("check_refund_eligibility",), ("#1042", "eligible")),
        Say("no thanks, not now", (), (), ("ticket #",)),
    )),
    Scenario("that order", (
        Say("status of order 1043 please", ("lookup_order",), ("#1043", "paid")),
        Say("can I get a refund for that order?", ("check_refund_eligibility",), ("#1043",)),
        Say("what about the other one", ("list_orders",), ("#10",), ("password",)),
    )),
    Scenario("password and account", (
        Say("i forgot my password", ("search_help_center",), ("Forgot password",)),
        Say("how long is the link valid", ("search_help_center",), ("one hour",)),
    )),
    Scenario("contact a person", (
        Say("how can I contact support?", ("search_help_center",), ("support@example.com",)),
        Say("what are your opening hours", ("search_help_center",), ("9 am",)),
    )),
    Scenario("warranty after the window", (
        Say("the grinder broke, is it under warranty?", ("search_help_center",), ("2-year",)),
        Say("ok open a ticket please", ("create_support_ticket",), ("ticket #",)),
    )),
    Scenario("change address", (
        Say("can i change the delivery address for my socks", ("search_help_center",),
            ("pending",)),
        Say("thanks!!", (), ("welcome",)),
    )),
    Scenario("return costs", (
        Say("do i have to pay for returns", ("search_help_center",), ("free",)),
        Say("how long do i have to send it back?", ("search_help_center",), ("30 days",)),
    )),
    Scenario("lamp refund status", (
        Say("did my refund for the desk lamp go through?", ("check_refund_eligibility",),
            ("#1045", "already been refunded"), ("can't be refunded",)),
        Say("when will i see the money", ("search_help_center",), ("5 to 7",)),
    )),
    Scenario("typed in a hurry", (
        Say("can i get a refnd for 1042", ("check_refund_eligibility",), ("#1042", "eligible")),
        Say("ya do it", ("create_support_ticket",), ("ticket #",)),
        Say("wat tickets do i have", ("list_tickets",), ("#1042",)),
    )),
    Scenario("the other order, asked by status", (
        Say("is my order 1044 shipped yet?", ("lookup_order",), ("#1044", "pending")),
        Say("and my other order?", ("list_orders",), ("#1042",)),
    )),
    Scenario("items by name, as people ask", (
        Say("has my grinder shipped yet?", ("lookup_order",), ("#1043", "paid")),
        Say("where's my jacket", ("lookup_order",), ("#1041", "shipped")),
        Say("I'd like my money back for the lamp", ("check_refund_eligibility",), ("#1045",)),
        Say("my headphones stopped working, can i get a refund", ("check_refund_eligibility",),
            ("#1042", "eligible")),
    )),
    Scenario("a preference said in passing", (
        Say("I prefer phone calls, by the way", (), ("phone",)),
        Say("how do I prefer to be contacted", (), ("phone",)),
    )),
]


def exchanges() -> int:
    return sum(len(s.exchanges) for s in SCENARIOS)


def demo_customer(tenant_id: int) -> User:
    """A new customer like the demo's Alex, with Alex's orders and no tickets or memories yet."""
    user = User(tenant_id=tenant_id, email=f"alex-{secrets.token_hex(4)}@example.com",
                name="Alex Rivera", role="customer")
    db.session.add(user)
    db.session.flush()
    give_demo_orders(user)
    db.session.commit()
    return user


def play(tenant_id: int, scenario: Scenario, config) -> list[tuple[Say, str, list[str], bool]]:
    """Each exchange of one conversation of a new demo customer with its answer, the tools
    called and whether it was on topic."""
    user = demo_customer(tenant_id)
    for note in scenario.notes:
        remember(SessionScope.for_user(user), note, config, source="hand")
    db.session.commit()
    conversation = create_conversation(user)
    played = []
    for say in scenario.exchanges:
        answer, conversation, events = ask(user, say.text, conversation)
        called = [e.data["tool"] for e in events if e.kind == "tool_call"]
        played.append((say, answer, called, say.on_topic(answer, called)))
    return played
