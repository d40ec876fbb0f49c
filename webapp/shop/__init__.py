"""Nimbus's domain: the shop's orders, support tickets and help center, and the agent's tools over them.

models.py holds the tables and order_numbers.py the one order-number pattern (both read by any
layer), tools.py the agent's tools, demo.py the demo shop's customers, orders and articles,
demo_conversation.py the long demo conversation the tour opens. Other packages import what is
named below, or those two leaves; nothing else (tests/test_layers.py holds the rule).
"""
from .demo import DEMO_CUSTOMERS, give_demo_orders, seed_help_center

# The demo conversation runs the agent, which lower layers reach through the tables and order
# numbers above: it is loaded when first asked for, not when the package is.
LATER = {"seed_long_conversation", "seeded_conversation", "tour"}

__all__ = ["DEMO_CUSTOMERS", "give_demo_orders", "seed_help_center", *sorted(LATER)]


def __getattr__(name: str):
    if name in LATER:
        from . import demo_conversation
        return getattr(demo_conversation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def init_app(app) -> None:
    """Offer the shop's tools to the model."""
    from ..agent import register_tools
    from . import tools
    register_tools(*tools.TOOLS)
