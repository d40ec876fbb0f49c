"""Nimbus's domain: the shop's orders, support tickets and help center, and the agent's tools over them."""


def init_app(app) -> None:
    """Offer the shop's tools to the model."""
    from ..agent import register_tools
    from . import tools
    register_tools(*tools.TOOLS)
