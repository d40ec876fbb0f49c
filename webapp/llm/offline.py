"""The embedded offline model: deterministic, no network, reads only the messages it is sent.

It covers the demo's scenarios (refunds by order number, "my other order", "yes please" → ticket,
order status, help-center questions, facts stated earlier, "remember that…") and streams word by
word, so every mechanism of the app can be shown on a laptop with no API key. Background tasks
(summaries, memory distillation) are handlers in TASKS (webapp/hooks.py, filled by their
packages' init_app), picked by their system prompt.
"""
import json
import re
import time
from typing import Iterator

from ..hooks import OFFLINE_TASKS as TASKS  # (messages) -> text, or None when not theirs
from ..shop.order_numbers import order_numbers
from .base import ChatProvider, Reply, ToolCall
from .tokens import estimate_tools
from .offline_answers import answer_from_results, other_order_answer
from .offline_followups import (DECLINE, HELP_WITH_ORDER, OTHER_ONE, PROBLEM, TICKET_LIST,
                                TICKET_REQUEST, WHY, asked_before, help_query, item_asked,
                                items_named, normalized, order_for_item, order_named, thanked,
                                wants_an_order_by_item)
from .offline_recall import PERSONAL_QUESTION, answer_from_fact, recall

ORDER_LIST = re.compile(r"\b(?:(?:list|show|what are|which are|see)(?: me)?(?: all)? my orders|"
                        r"(?:which|what) orders|my orders\b.*\?)", re.I)
# Questions about the shop itself ("contact support", "your opening hours"): never about the
# customer's own facts, whatever words they share with them.
ABOUT_THE_SHOP = re.compile(r"\b(support|customer service|your team|the shop|you (?:ship|deliver|"
                            r"accept|sell|offer))\b", re.I)
CONFIRM = re.compile(r"^\s*(yes|yeah|yep|sure|ok(ay)?|please do|go ahead|do it|please)\b", re.I)
QUESTION = re.compile(r"\?|^\s*(?:(?:ok(?:ay)?|so|and|then|but|well|hm+)[, ]+)?"
                      r"(what|who|where|when|how|why|which|do|does|did|can|could|is|are|will|should)\b",
                      re.I)
GREETING = re.compile(r"^\s*(hi|hello|hey|good (morning|afternoon|evening))\b", re.I)


def count_tokens(messages: list[dict]) -> int:
    """The offline model's own tokenizer: words and punctuation marks."""
    text = " ".join(str(m.get("content") or "") + str(m.get("tool_calls") or "") for m in messages)
    return len(re.findall(r"\w+|[^\w\s]", text))


def run_task(messages: list[dict]) -> str | None:
    """The text of the background task these messages ask for, or None for a chat turn."""
    for task in TASKS:
        text = task(messages)
        if text is not None:
            return text
    return None


def persona(messages: list[dict]) -> str:
    first = messages[0] if messages and messages[0]["role"] == "system" else {"content": ""}
    match = re.search(r"\bYou are (\w+)", first["content"])
    return match.group(1) if match else "the assistant"


# What the offline model can follow of a shop's extra instructions: a sign-off and a tone.
SIGN_OFF = re.compile(r"(?:sign(?:[- ]off| (?:off|each|every|all|your))|end (?:each|every|all|your))"
                      r"[^\"“\n]*[\"“]([^\"”\n]+)[\"”]", re.I)
FORMAL = re.compile(r"\bformal(?:ly)?\b|\bpolite(?:ly)?\b", re.I)
CASUAL = re.compile(r"\b(?:casual(?:ly)?|informal(?:ly)?|relaxed)\b", re.I)
CONTRACTIONS = {"I'm": "I am", "I'll": "I will", "I've": "I have", "I'd": "I would",
                "can't": "cannot", "don't": "do not", "doesn't": "does not", "isn't": "is not",
                "it's": "it is", "It's": "It is", "Here's": "Here is", "here's": "here is",
                "you'd": "you would", "you're": "you are", "that's": "that is",
                "That's": "That is", "what's": "what is", "won't": "will not", "wasn't": "was not"}


def shop_instructions(messages: list[dict]) -> str:
    """The admin's extra instructions, as the system prompt carries them (webapp/agent/prompts.py)."""
    first = messages[0] if messages and messages[0]["role"] == "system" else {"content": ""}
    return first["content"].partition("Instructions from the shop's team:")[2].strip()


def follow_instructions(text: str, instructions: str) -> str:
    """The answer in the shop's tone, with its sign-off: what a rule-based model can honour."""
    if not instructions:
        return text
    if FORMAL.search(instructions):
        text = re.sub(r"^(?:Hi|Hey|Hello)!\s*", "Good day. ", text)
        for short, long in CONTRACTIONS.items():
            text = re.sub(rf"(?<![\w']){re.escape(short)}(?![\w'])", long, text)
    elif CASUAL.search(instructions):
        text = re.sub(r"^(?:Hi|Hello)!", "Hey there!", text)
    sign_off = SIGN_OFF.search(instructions)
    if sign_off and not text.rstrip().endswith(sign_off.group(1).strip()):
        text = f"{text.rstrip()}\n\n{sign_off.group(1).strip()}"
    return text


def earlier_text(messages: list[dict]) -> list[str]:
    """What was said before the last message, newest first (answers and questions alike)."""
    return [m.get("content") or "" for m in reversed(messages[:-1]) if m["role"] in ("user", "assistant")]


def last_assistant_text(messages: list[dict]) -> str:
    return next((t for m, t in ((m, m.get("content") or "") for m in reversed(messages[:-1]))
                 if m["role"] == "assistant" and t.strip()), "")


OTHER_ORDER = OTHER_ONE  # "the other order", "and the other one?"


def mentioned_orders(messages: list[dict]) -> list[int]:
    """Order numbers said before the last message, newest first (ticket numbers left out)."""
    mentioned: list[int] = []
    for text in earlier_text(messages):
        for n in order_numbers(re.sub(r"ticket #?\d+", "", text, flags=re.I)):
            if n not in mentioned:
                mentioned.append(n)
    return mentioned


def earlier_user(messages: list[dict]) -> list[str]:
    """The customer's earlier messages, newest first."""
    return [m.get("content") or "" for m in reversed(messages[:-1]) if m["role"] == "user"]


def last_reason(messages: list[dict]) -> str | None:
    """Why the last refund check said what it did, for "why not?"."""
    for m in reversed(messages[:-1]):
        if m["role"] == "tool" and m.get("name") == "check_refund_eligibility":
            try:
                result = json.loads(m["content"])
            except json.JSONDecodeError:
                return None
            if isinstance(result, dict) and result.get("reason"):
                return f"Order #{result['order_id']}: {result['reason']}"
    return None


def last_question(messages: list[dict]) -> str:
    return next((m.get("content") or "" for m in reversed(messages) if m["role"] == "user"), "")


def refund_topic(messages: list[dict]) -> bool:
    for m in reversed(messages[:-1]):
        if any(c["name"] == "check_refund_eligibility" for c in m.get("tool_calls") or []):
            return True
        said = (m.get("content") or "").lower()
        # An answer about a refund names its order; the greeting's "orders and refunds" does not.
        if "refund" in said and (m["role"] == "user" or re.search(r"#\d{3,}", said)):
            return True
    return False


class OfflineModel(ChatProvider):
    name = "offline demo model"
    model = "nimbus-offline-1"
    offline = True
    pause = 0.0  # seconds between words

    def __init__(self, words_per_second: float = 0.0):
        # 0: every word at once (tests). A pace lets a demo show streaming, and Stop mid-reply.
        self.pause = 1.0 / words_per_second if words_per_second and words_per_second > 0 else 0.0

    def stream(self, messages: list[dict], tools: list[dict]) -> Iterator[str | Reply]:
        task = run_task(messages)  # background work (summaries, memories) is never paced
        if task is not None:
            reply = Reply(task)
        else:
            reply = self.respond(messages, {t["name"] for t in tools})
            if reply.text and not reply.tool_calls:
                reply.text = follow_instructions(reply.text, shop_instructions(messages))
        for index, piece in enumerate(re.findall(r"\S+\s*", reply.text)):
            if index and self.pause and task is None:
                time.sleep(self.pause)  # cooperative under gevent; the caller holds no lock for it
            yield piece
        # The tool schemas are in the prompt too, as on a real server (counted as the estimator does).
        reply.usage = {"prompt_tokens": count_tokens(messages) + estimate_tools(tools),
                       "completion_tokens": count_tokens([{"content": reply.text}])}
        yield reply

    def respond(self, messages: list[dict], tools: set[str]) -> Reply:
        task = run_task(messages)
        if task is not None:
            return Reply(task)
        last = messages[-1]
        if last["role"] == "tool":
            trailing = []
            for m in reversed(messages):
                if m["role"] != "tool":
                    break
                trailing.insert(0, m)
            question = normalized(last_question(messages))
            item = item_asked(question)
            if [m.get("name") for m in trailing] == ["list_orders"] and item \
                    and "check_refund_eligibility" in tools:
                order = order_for_item(item, json.loads(trailing[0]["content"]).get("orders", []))
                if order is not None:
                    return self.call("check_refund_eligibility", messages, order_id=order["order_id"])
            if [m.get("name") for m in trailing] == ["list_orders"] \
                    and not OTHER_ORDER.search(question):
                orders = json.loads(trailing[0]["content"]).get("orders", [])
                order = order_named([question, *earlier_user(messages)], orders)
                if order is not None and TICKET_REQUEST.search(question):
                    return self.open_ticket(question, [order["order_id"]], messages)
                if order is not None:
                    return self.about_order(question, [order["order_id"]], messages, tools)
            if ([m.get("name") for m in trailing] == ["list_orders"]
                    and OTHER_ORDER.search(last_question(messages))):
                # The customer named no number: say which order is the likely one, and offer.
                return Reply(other_order_answer(trailing[0]["content"], mentioned_orders(messages),
                                                refund_topic(messages)))
            return Reply(answer_from_results(trailing))
        return self.answer(last.get("content") or "", messages, tools)

    def call(self, name: str, messages: list[dict], **arguments) -> Reply:
        return Reply("", [ToolCall(f"call_{len(messages)}_{name}", name, arguments)])

    def answer(self, text: str, messages: list[dict], tools: set[str]) -> Reply:
        text = normalized(text)
        lowered = text.lower()
        numbers = order_numbers(text)
        if GREETING.match(text) and len(text.split()) <= 4:
            return Reply(f"Hi! I'm {persona(messages)}. I can check your orders and refunds, open "
                         "support tickets and answer questions about the shop. What can I do for you?")
        if thanked(text):
            return Reply("You're welcome! Anything else I can help with?")
        if (topic := asked_before(text)) and "search_history" in tools:
            return self.call("search_history", messages, query=topic)
        if CONFIRM.match(text) and "?" not in text and len(text.split()) <= 5:
            return self.confirm(messages, tools)
        if DECLINE.match(text) and len(text.split()) <= 6:
            return Reply("No problem. Is there anything else I can help with?")
        if TICKET_LIST.search(text) and "list_tickets" in tools:
            return self.call("list_tickets", messages)
        if TICKET_REQUEST.search(text) and "create_support_ticket" in tools:
            if (not numbers and not self.infer_order(lowered, messages) and "list_orders" in tools
                    and re.search(r"\bit\b", lowered)
                    and any(items_named(t) for t in earlier_user(messages))):
                return self.call("list_orders", messages)  # "a ticket for it": the item named before
            return self.open_ticket(text, numbers, messages)
        if WHY.match(text) and (reason := last_reason(messages)):
            return Reply(reason)
        if HELP_WITH_ORDER.search(text) and not numbers:
            return self.about_order(text, [], messages, tools)
        asks_refund = re.search(r"\brefund|money back|\breturn\b|send (?:it |them )?back", lowered)
        if PROBLEM.search(text) and not numbers and not asks_refund and "search_help_center" in tools:
            return self.call("search_help_center", messages, query=help_query(text, messages))
        if not numbers and "list_orders" in tools and wants_an_order_by_item(
                text, earlier_user(messages), bool(mentioned_orders(messages)),
                "which order do you mean" in last_assistant_text(messages).lower()):
            return self.call("list_orders", messages)
        if re.search(r"\bremember\b(?! to\b)", lowered) and not QUESTION.search(text):
            fact = re.sub(r"^.*?\bremember(?: that|:)?\s*", "", text, flags=re.I).strip()
            if "save_memory" in tools:
                return self.call("save_memory", messages, content=fact)
            return Reply(f"Got it — I'll keep in mind that {fact.rstrip('.')}.")
        if (ORDER_LIST.search(text) or (item_asked(text) and not numbers)) and "list_orders" in tools:
            return self.call("list_orders", messages)
        vague = re.search(r"\b(other|that|this) order\b", lowered) or OTHER_ONE.search(text) or (
            "refund" in lowered and re.search(r"\bit\b", lowered))
        if numbers or vague:
            numbers = numbers or self.infer_order(lowered, messages)
            order_reply = self.about_order(text, numbers, messages, tools)
            if order_reply is not None:
                return order_reply
        if QUESTION.search(text):
            return self.answer_question(text, messages, tools)
        return self.acknowledge(text, messages)

    def infer_order(self, lowered: str, messages: list[dict]) -> list[int]:
        """Infer the order from the conversation only when it is unambiguous; otherwise ask."""
        mentioned = mentioned_orders(messages)
        if "other" in lowered:
            return mentioned[1:2] if len(mentioned) == 2 else []
        return mentioned[:1] if len(mentioned) == 1 else []

    def about_order(self, text, numbers, messages, tools) -> Reply | None:
        lowered = text.lower()
        refund = "refund" in lowered or "money back" in lowered or (
            not re.search(r"\b(status|where|track|arrive|shipped)\b", lowered) and refund_topic(messages))
        if not numbers and OTHER_ORDER.search(text) and mentioned_orders(messages) \
                and "list_orders" in tools:
            return self.call("list_orders", messages)  # to name the likely one, not ask blind
        if not numbers:
            return Reply("Which order do you mean? Please give me its order number, so I check "
                         "the right one.")
        if refund and "check_refund_eligibility" in tools:
            return self.call("check_refund_eligibility", messages, order_id=numbers[0])
        if "lookup_order" in tools:
            return self.call("lookup_order", messages, order_id=numbers[0])
        return None

    def open_ticket(self, text, numbers, messages) -> Reply:
        """A ticket the customer asked for, about the order they name or the one talked about."""
        earlier = earlier_user(messages)
        about = " ".join([*earlier[:1], text]) if len(text.split()) <= 8 else text
        numbers = numbers or self.infer_order(text.lower(), messages)
        category = ("refund" if re.search(r"\brefund|money back", about, re.I) else
                    "product" if PROBLEM.search(about) or re.search(r"\bnoise|warranty", about, re.I)
                    else "other")
        arguments = {"category": category, "summary": f"Customer: {about}"[:300]}
        if numbers:
            arguments["order_id"] = numbers[0]
        return self.call("create_support_ticket", messages, **arguments)

    def confirm(self, messages, tools) -> Reply:
        offer = last_assistant_text(messages)
        refund = re.search(r"order #(\d+) is eligible.*open a refund request", offer, re.S)
        if refund and "create_support_ticket" in tools:
            number = int(refund.group(1))
            return self.call("create_support_ticket", messages, category="refund", order_id=number,
                             summary=f"Customer requests a refund for order {number} (eligible).")
        check = re.search(r"most recent other order is \*\*#(\d+)\*\*.*refund check", offer, re.S)
        if check and "check_refund_eligibility" in tools:
            return self.call("check_refund_eligibility", messages, order_id=int(check.group(1)))
        if "open a support ticket" in offer and "create_support_ticket" in tools:
            question = next((m["content"] for m in reversed(messages[:-1]) if m["role"] == "user"), "")
            return self.call("create_support_ticket", messages, category="other",
                             summary=f"Customer question the help center did not answer: {question}"[:300])
        return Reply("Sorry, I'm not sure what you'd like me to go ahead with. Could you tell me?")

    def answer_question(self, text, messages, tools) -> Reply:
        shop_question = ABOUT_THE_SHOP.search(text) and not PERSONAL_QUESTION.search(text)
        found = None if shop_question else recall(text, messages)
        if found:
            return Reply(answer_from_fact(text, *found))
        if PERSONAL_QUESTION.search(text) and not shop_question:
            if "search_memories" in tools and not any(
                    m.get("name") == "search_memories" for m in messages):
                return self.call("search_memories", messages, query=text)
            return Reply("I don't know that — it isn't in what I can see of our conversation. "
                         "Could you tell me?")
        if "search_help_center" in tools:
            return self.call("search_help_center", messages, query=help_query(text, messages))
        return Reply("I'm not sure. I'm the offline demo model: I can check orders and refunds, "
                     "open tickets and recall what you told me.")

    def acknowledge(self, text, messages) -> Reply:
        name = re.search(r"\b(?:my name is|call me|i'm called)\s+([A-Z][\w'-]+)", text, re.I)
        if name:
            return Reply(f"Nice to meet you, {name.group(1)}! How can I help you today?")
        preference = re.search(r"\bI (prefer|like|love|always|never)\b(.*)", text, re.I)
        if preference:
            return Reply(f"Noted: you {preference.group(1).lower()}{preference.group(2).rstrip('.!')}.")
        detail = re.search(r"\bmy ([a-z][\w ]{0,30}?) (?:is|are) (.+)", text, re.I)
        if detail:
            return Reply(f"Thanks, noted: your {detail.group(1).lower()} is "
                         f"{detail.group(2).strip().rstrip('.!')}.")
        return Reply(f"Thanks for letting me know. I'm {persona(messages)}: ask me about an order, a "
                     "refund, or anything in our help center.")
