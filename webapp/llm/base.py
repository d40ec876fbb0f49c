"""What every provider returns, and the one error the agent loop catches."""
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Iterator

from .messages import assistant_message


class ProviderError(RuntimeError):
    """The provider could not answer: down, slow, refused or malformed."""


class ContextTooLong(ProviderError):
    """The server refused the request as longer than its context window (n_ctx when it said)."""

    def __init__(self, message: str, n_ctx: int | None = None, n_prompt: int | None = None):
        super().__init__(message)
        self.n_ctx, self.n_prompt = n_ctx, n_prompt  # the window, and the prompt it counted


class ProviderBusy(ProviderError):
    """The server is busy (HTTP 429, or 503 with Retry-After): the person is told at once when
    to try again, rather than held while Nimbus waits (`retry_after`: seconds, None unsaid)."""

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


GAVE_WAY = "gave its slot to a chat"  # why a background call ended: a chat took its slot


class ProviderCancelled(ProviderError):
    """The call was ended on our side: Stop ("stopped"), or one of its deadlines passed."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict

    def as_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    provider_raw: dict | None = None
    usage: dict | None = None  # {"prompt_tokens": int, "completion_tokens": int} when reported
    finish_reason: str | None = None  # "length": the output cap cut the answer short;
    # "deadline": a deadline ended it after its first words, `cut_by` says which
    cut_by: str | None = None
    response_id: str | None = None  # the provider's id of the completion, where it gives one
    response_model: str | None = None  # the model that answered, as the provider names it

    def as_message(self) -> dict:
        return assistant_message(self.text, [c.as_dict() for c in self.tool_calls], self.provider_raw)


class ChatProvider(ABC):
    """What every provider is and can do, declared on its class (as simonw/llm's models declare
    `can_stream` and `supports_tools`), so callers read capabilities instead of probing for them."""
    name: str = "chat provider"
    model: str = ""
    offline: bool = False  # answers in-process, without a server (the offline demo model)
    takes_options: bool = False  # stream() takes max_tokens=, response_format= and purpose=
    supports_tools: bool = True  # the tool specs it is given reach the model

    @abstractmethod
    def stream(self, messages: list[dict], tools: list[dict]) -> Iterator["str | Reply"]:
        """Yield text deltas as they come, then exactly one Reply; raise ProviderError on failure."""

    def cancel(self, thread_id: int | None = None, reason: str = "stopped") -> None:
        """End the call that thread is reading now (Stop); a provider without sockets has none."""
