"""Model providers behind one boundary: the neutral message format in, text and tool calls out."""
from .base import ChatProvider, ProviderError, Reply, ToolCall  # noqa: F401  re-exported
from .profile import uses_openai


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
