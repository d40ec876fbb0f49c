"""Memory: how stored turns become the context of the next model call."""
