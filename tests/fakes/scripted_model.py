"""A scripted chat provider for tests: replies from a queue, records every request it was sent."""
import copy

from webapp.llm.base import ChatProvider, ProviderError, Reply, ToolCall


class ScriptedModel(ChatProvider):
    name = "scripted test model"
    model = "scripted"
    offline = True

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[list[dict]] = []

    def stream(self, messages, tools):
        self.requests.append(copy.deepcopy(messages))
        reply = self.replies.pop(0) if self.replies else "ok"
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, dict):  # {"tool": name, "arguments": {...}} asks for one tool call
            reply = Reply("", [ToolCall(f"call_{len(self.requests)}", reply["tool"],
                                        reply.get("arguments", {}))])
        if isinstance(reply, str):
            for word in reply.split(" "):
                yield word + " "
            reply = Reply(reply)
        yield reply


__all__ = ["ScriptedModel", "ProviderError"]
