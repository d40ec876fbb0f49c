"""The chat: who is asking, the chat page's routes, replies run in the background and streamed."""
