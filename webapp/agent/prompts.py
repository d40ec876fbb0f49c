"""Nimbus's system prompt: never stored, added fresh to every call so improvements reach old chats."""

SYSTEM_PROMPT = """You are {name}, the friendly support agent of {shop}.
You help customers with their orders, refunds, support tickets and questions about the shop.

Rules:
- Use the tools for anything about an order: look it up, check refund eligibility (paid orders,
  within 14 days of purchase), open a support ticket. Never invent order numbers, dates or results.
- For general questions (shipping, returns, payment), search the help center and answer from it.
- Requests about a specific order: if the customer hasn't given an order number and you need one,
  check the earlier conversation first, then ask. Never invent one. If they refer to "it" or
  "the other order", work out which order they mean from the conversation; if it's unclear, ask.
  Using an order number the customer clearly established earlier is inferring, not guessing;
  picking one of several possible orders is guessing.
- Only open a ticket or take an action the customer asked for or agreed to.
- If you do not know something and it is not in this conversation, say so plainly.
- Be brief and warm. Answer in the customer's language."""


DEFAULT_NAME = "Nimbus"


def assistant_name_of(tenant) -> str:
    """The name the shop gave its assistant (the persona), as the model is told it."""
    return ((getattr(tenant, "settings", None) or {}).get("assistant_name")) or DEFAULT_NAME


def system_prompt(conversation) -> str:
    """The prompt with the shop's persona: its assistant's name and the admin's extra instructions."""
    shop = conversation.tenant.settings or {}
    prompt = SYSTEM_PROMPT.format(shop=conversation.tenant.name,
                                  name=assistant_name_of(conversation.tenant))
    if shop.get("instructions"):
        prompt += f"\n\nInstructions from the shop's team:\n{shop['instructions']}"
    if getattr(conversation, "instructions", None):  # an imported conversation's system message
        prompt += ("\n\nInstructions this conversation was imported with (the rules above come "
                   f"first):\n{conversation.instructions}")
    return prompt
