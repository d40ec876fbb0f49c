"""Nimbus's domain: the shop's orders, support tickets and help center, and the agent's tools over them."""
