"""The chat page: its routes, the sidebar, streaming a reply, steering and summary views."""
