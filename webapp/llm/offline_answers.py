"""How the offline model words an answer from the tool results it was sent, in Markdown where a
person would use it: lists for several orders or steps, bold for amounts and what matters most."""
import json
import re

from ..plurals import plural


def refund_answer(result: dict) -> str:
    number = result["order_id"]
    if result.get("eligible"):
        days_left = result["refund_window_days"] - result["days_since_purchase"]
        return (f"Good news: order #{number} is eligible for a refund: it's paid and within the "
                f"{result['refund_window_days']}-day window (**{days_left} days left**), so you "
                f"would get **{result['amount']}** back. Would you like me to open a refund request "
                f"for it?")
    if result.get("status") == "refunded":  # "did my refund go through?": yes, say so
        return (f"Yes: order #{number} ({result.get('item', 'your order')}) has already been "
                f"refunded, **{result.get('amount', '')}** back to your card.")
    if result.get("status") != "paid":
        return f"Sorry, order #{number} can't be refunded: {result['reason']}"
    return (f"Sorry, order #{number} was purchased {result['days_since_purchase']} days ago, and "
            f"refunds are only possible within {result['refund_window_days']} days.")


def order_answer(result: dict) -> str:
    return (f"Order #{result['order_id']} ({result['item']}, **{result['amount']}**) was placed on "
            f"{result['purchased_on']} and is **{result['status']}**.")


def orders_answer(result: dict) -> str:
    orders = result.get("orders") or []
    if not orders:
        return "I can't find any orders on your account."
    lines = [f"- **#{o['order_id']}** {o['item']}: **{o['amount']}**, {o['status']} "
             f"(ordered {o['purchased_on']})" for o in orders]
    return "Here are your orders, newest first:\n\n" + "\n".join(lines)


def age(days: int) -> str:
    return "today" if days <= 0 else "yesterday" if days == 1 else f"{days} days ago"


def other_order_answer(content: str, mentioned: list[int], about_refund: bool) -> str:
    """Name the most recent order not talked about yet, with its age, and offer the next step."""
    try:
        result = json.loads(content)
    except json.JSONDecodeError:
        result = {}
    orders = result.get("orders") or [] if isinstance(result, dict) else []
    others = [o for o in orders if o["order_id"] not in mentioned]
    if not others:
        return "I can't find another order on your account besides the one we talked about."
    likely = others[0]
    named = (f"Your most recent other order is **#{likely['order_id']}** ({likely['item']}, "
             f"{likely['amount']}), from {age(likely['days_since_purchase'])}")
    if not about_refund:
        return f"{named}, and it is **{likely['status']}**. Would you like a refund check for it?"
    if likely.get("refund_eligible"):
        return (f"{named}: order #{likely['order_id']} is eligible for a refund, so you would get "
                f"**{likely['amount']}** back. Would you like me to open a refund request for it?")
    why = "it was already refunded" if likely["status"] == "refunded" else (
        f"it is still {likely['status']}" if likely["status"] != "paid"
        else f"it is past the {result.get('refund_window_days', 14)}-day window")
    eligible = next((o for o in others[1:] if o.get("refund_eligible")), None)
    if eligible is None:
        return (f"{named}, but it can't be refunded: {why}, and none of your other orders can "
                "be either. Would you like me to open a support ticket so a colleague can help?")
    return (f"{named}, but it can't be refunded: {why}. Before it, order #{eligible['order_id']} "
            f"is eligible for a refund ({eligible['item']}, from "
            f"{age(eligible['days_since_purchase'])}, **{eligible['amount']}** back). Would you "
            "like me to open a refund request for it?")


def ticket_answer(result: dict) -> str:
    about = f" for your refund on order #{result['order_id']}" if result.get("order_id") else ""
    return f"Done! I've opened ticket #{result['ticket_id']}{about}. Our team will be in touch."


def tickets_answer(result: dict) -> str:
    tickets = result.get("tickets") or []
    open_ = [t for t in tickets if t.get("status") != "closed"]
    if not open_:
        return ("You have no open tickets. Would you like me to open one?" if not tickets else
                f"You have no open tickets; {plural(len(tickets), 'earlier ticket')} closed.")
    lines = [f"- **Ticket #{t['ticket_id']}** ({t['status']}){about_order_of(t)}: {t['summary']}"
             for t in open_]
    return f"You have {plural(len(open_), 'open ticket')}:\n\n" + "\n".join(lines)


def about_order_of(ticket: dict) -> str:
    return f", about order #{ticket['order_id']}" if ticket.get("order_id") else ""


def help_answer(result: dict) -> str:
    if not result.get("results"):
        return ("I couldn't find anything about that in our help center. Would you like me to "
                "open a support ticket so a colleague can help?")
    top = result["results"][0]
    steps = re.split(r"\s*\b\d+\.\s+", top["excerpt"])
    if len(steps) >= 3:  # "To do it: 1. … 2. … 3. …" reads best as a numbered list
        numbered = "\n".join(f"{n}. {step.strip()}" for n, step in enumerate(steps[1:], 1))
        return f"Here's how, from our help center (“{top['title']}”):\n\n{numbered}"
    return f"Here's what our help center says (“{top['title']}”): {top['excerpt']}"


def memory_saved_answer(result: dict) -> str:
    return f"Got it — I'll remember that: {result.get('content', '').rstrip('.')}."


def search_answer(result: dict) -> str:
    found = result.get("results") or []
    if not found:
        return "I looked through what I have saved, but I don't know that yet."
    top = found[0]
    return f"From what I found: {(top.get('content') or top.get('text') or '').rstrip('.')}."


RENDERERS = {
    "check_refund_eligibility": refund_answer,
    "lookup_order": order_answer,
    "list_orders": orders_answer,
    "create_support_ticket": ticket_answer,
    "list_tickets": tickets_answer,
    "search_help_center": help_answer,
    "save_memory": memory_saved_answer,
    "search_memories": search_answer,
    "search_history": search_answer,
}


def answer_from_results(tool_messages: list[dict]) -> str:
    """One sentence per tool result; errors are passed on in plain words."""
    parts = []
    for m in tool_messages:
        try:
            result = json.loads(m["content"])
        except json.JSONDecodeError:
            result = {"error": m["content"]}
        if isinstance(result, dict) and result.get("memory_off"):
            parts.append("I can't save that: you turned memory off, so I keep nothing from our "
                         "conversations. You can turn it back on in the memory panel.")
        elif isinstance(result, dict) and "error" in result:
            parts.append(f"Sorry, I couldn't do that: {result['error']}")
        elif m.get("name") in RENDERERS:
            parts.append(RENDERERS[m["name"]](result))
        else:
            parts.append(f"Here is what I found: {m['content'][:300]}")
    return ("\n\n" if any("\n" in p for p in parts) else " ").join(parts)
