"""A chat provider for stream tests: words paced out slowly, optionally held at a gate mid-reply."""
import threading
import time

from webapp.llm.base import ChatProvider, Reply, ToolCall


class PacedModel(ChatProvider):
    """Says `text` word by word, `delay` seconds apart; after the first word it waits for `gate`."""
    name = "paced test model"
    model = "paced"
    offline = True

    def __init__(self, text: str, delay: float = 0.0, gate: threading.Event | None = None,
                 tool: dict | None = None):
        self.text, self.delay, self.gate, self.tool = text, delay, gate, tool
        self.requests: list[list[dict]] = []

    def stream(self, messages, tools):
        self.requests.append(messages)
        if self.tool and messages[-1]["role"] == "user":  # {"name", "arguments"}: call it first
            yield Reply("", [ToolCall("call_1", self.tool["name"], self.tool["arguments"])])
            return
        words = [w + " " for w in self.text.split(" ")]
        for index, word in enumerate(words):
            if index == 1 and self.gate is not None:
                assert self.gate.wait(10), "the test never opened the gate"
            elif index:
                time.sleep(self.delay)
            yield word
        yield Reply(self.text)
