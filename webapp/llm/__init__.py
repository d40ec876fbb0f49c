"""Model providers behind one boundary: the neutral message format in, text and tool calls out.

base.py is the boundary (ChatProvider, Reply, the errors), messages.py the neutral format,
tokens.py the one token estimator, profile.py what a server is (its window, its model),
server_counts.py the tokens a server counted, valid_text.py what text may be stored,
openai_provider.py and offline.py (with offline_*.py) the two providers. Other packages import
what is named below; nothing else (tests/test_layers.py holds the rule).
"""
from .base import (GAVE_WAY, ChatProvider, ContextTooLong, ProviderBusy, ProviderCancelled,
                   ProviderError, Reply, ToolCall)
from .messages import (ROLES, as_sent, assistant_message, close_open_tool_calls, compact_turn,
                       final_answer, notice_message, tool_message, user_message)
from .offline import OfflineModel
from .offline_recall import FACT_PATTERNS, SENTENCE_END, sentences
from .profile import Profile, announce, learn_window, profile_for, uses_openai
from .server_counts import tool_tokens
from .tokens import calibrated_ratio, estimate_messages, estimate_text, estimate_tools
from .valid_text import valid_stream, valid_text as storable_text  # the module's name is taken

__all__ = ["ChatProvider", "ContextTooLong", "FACT_PATTERNS", "GAVE_WAY", "OfflineModel",
           "Profile", "ProviderBusy", "ProviderCancelled", "ProviderError", "ROLES", "Reply", "SENTENCE_END",
           "ToolCall", "announce", "as_sent", "assistant_message", "calibrated_ratio",
           "close_open_tool_calls", "compact_turn", "estimate_messages", "estimate_text",
           "estimate_tools",
           "final_answer", "get_provider", "is_offline", "learn_window", "notice_message",
           "profile_for", "provider_for", "sentences", "storable_text", "tool_message",
           "tool_tokens", "user_message", "uses_openai", "valid_stream"]


def get_provider(config) -> "ChatProvider":
    """The OpenAI-compatible provider when a key or base URL is configured, else the offline model.

    Cheap to call per request: the OpenAI client (its connection pool, its CA certificates)
    is built once per process and shared.
    """
    if uses_openai(config):
        from .openai_provider import OpenAIProvider
        return OpenAIProvider(
            api_key=config.get("OPENAI_API_KEY") or "not-needed",
            base_url=config.get("OPENAI_BASE_URL"),
            model=config["NIMBUS_MODEL"],
            timeout=config["NIMBUS_PROVIDER_TIMEOUT"],
            max_tokens=config.get("NIMBUS_MAX_OUTPUT_TOKENS"),
            first_token_timeout=config.get("NIMBUS_FIRST_TOKEN_TIMEOUT"),
            idle_timeout=config.get("NIMBUS_IDLE_TIMEOUT"),
            min_pace=config.get("NIMBUS_MIN_TOKENS_PER_SECOND"),
            profile_config={k: config.get(k) for k in (
                "OPENAI_BASE_URL", "OPENAI_API_KEY", "NIMBUS_MODEL", "NIMBUS_CONTEXT_WINDOW",
                "NIMBUS_PROVIDER_SLOTS")},
        )
    from .offline import OfflineModel
    return OfflineModel(config.get("NIMBUS_OFFLINE_WORDS_PER_SECOND") or 0)


def provider_for(app, **overrides) -> "ChatProvider":
    """The app's provider, the one path for every model call (chat, summaries, distiller, CLI).

    Tests and apps swap the factory in app.extensions["provider_factory"]; `overrides` change
    config keys for this call only (the distiller's own model, the CLI's unpaced offline model).
    """
    factory = app.extensions.get("provider_factory", get_provider)
    return factory({**app.config, **overrides} if overrides else app.config)


def is_offline(app) -> bool:
    """Whether the offline demo model answers, decided without building a provider."""
    factory = app.extensions.get("provider_factory")
    if factory is not None:
        return factory(app.config).offline
    return not uses_openai(app.config)
