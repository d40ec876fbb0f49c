"""What the configured provider is: which server and model answer, its context window, its slots.

Settings win (NIMBUS_CONTEXT_WINDOW, NIMBUS_MAX_OUTPUT_TOKENS, NIMBUS_PROVIDER_SLOTS); where one
is unset, the server is asked where it says: llama.cpp's `/props` (n_ctx, total_slots), vLLM's
`max_model_len` in `/v1/models`, Ollama's `/api/show` (num_ctx, else the model's context length
capped at Ollama's default 4096), LM Studio's `/api/v0/models` (loaded_context_length). Whether
the model's chat template can carry tools is read from llama.cpp's `/props`
(`chat_template_caps.supports_tools`); a server that does not say is taken to carry them. The
answer is kept per process for each endpoint and model; a server that could not be reached is
asked again after a minute.
"""
import logging
import os
import re
import threading
import time
from dataclasses import dataclass

import httpx2

log = logging.getLogger(__name__)
PROBE_TIMEOUT = 2.0
RETRY_UNREACHABLE = 60.0
OLLAMA_DEFAULT_CTX = 4096
NO_TOOLS_LOGGED = "the model's chat template cannot carry tools (/props: chat_template_caps." \
    "supports_tools is false)"


@dataclass
class Profile:
    kind: str  # llama.cpp, vLLM, Ollama, LM Studio, OpenAI, Gemini, OpenAI-compatible, offline
    model: str
    context_window: int | None = None  # tokens the server holds per request; None: not known
    slots: int | None = None  # requests it serves at once; None: not known (many)
    reachable: bool = True
    problem: str = ""  # why it is unreachable or misconfigured, said in the banner
    supports_tools: bool = True  # False: the chat template drops tools (llama.cpp said so)

    @property
    def label(self) -> str:
        return f"{self.kind} · {self.model}"

    def output_reserve(self, max_output: int) -> int:
        """The tokens kept free for the answer: max_tokens, at most a quarter of a small window."""
        if self.context_window:
            return min(max_output, max(self.context_window // 4, 64))
        return max_output

    def request_room(self, max_output: int) -> int | None:
        """Tokens a request may take beside its output reserve, a tenth of the window kept for
        the estimate's error; None when the window is not known."""
        if not self.context_window:
            return None
        return self.context_window - self.context_window // 10 - self.output_reserve(max_output)


_CACHE: dict[tuple, tuple[float, Profile]] = {}
_LOCK = threading.Lock()


def guess_kind(base_url: str) -> str:
    if not base_url or "api.openai.com" in base_url:
        return "OpenAI"
    if "generativelanguage.googleapis.com" in base_url:
        return "Gemini"
    if ":11434" in base_url:
        return "Ollama"
    if ":1234" in base_url:
        return "LM Studio"
    return "OpenAI-compatible"


def server_root(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def probe(base_url: str, model: str, api_key: str | None) -> Profile:
    """Ask the server what it is; every probe is optional and short."""
    kind = guess_kind(base_url)
    profile = Profile(kind, model)
    if kind in ("OpenAI", "Gemini"):
        return profile  # hosted: windows are large and /models says nothing about them
    root = server_root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx2.Client(timeout=PROBE_TIMEOUT, headers=headers) as client:
        try:
            models = client.get(f"{root}/v1/models")
        except httpx2.HTTPError as error:
            return Profile(kind, model, reachable=False,
                           problem=f"{base_url} cannot be reached ({type(error).__name__})")
        listed = models.json().get("data") if models.status_code == 200 and \
            "json" in models.headers.get("content-type", "") else None
        if models.status_code in (401, 403):
            profile.problem = f"{base_url} refused the API key (HTTP {models.status_code})"
        entry = next((m for m in listed or [] if m.get("id") == model), None)
        if listed and entry is None and model not in ("", None):
            ids = ", ".join(str(m.get("id")) for m in listed[:5])
            profile.problem = f"the server has no model {model!r} (it serves {ids})"
        entry = entry or (listed[0] if listed else {})
        owner = str(entry.get("owned_by") or "")
        if entry.get("max_model_len"):
            profile.kind, profile.context_window = "vLLM", int(entry["max_model_len"])
        elif owner == "llamacpp" or "meta" in entry and "n_ctx_train" in (entry.get("meta") or {}):
            profile.kind = "llama.cpp"
        elif owner == "library" or kind == "Ollama":
            profile.kind = "Ollama"
        props = get_json(client, f"{root}/props")
        if props and ("total_slots" in props or "default_generation_settings" in props):
            profile.kind = "llama.cpp"
            settings = props.get("default_generation_settings") or {}
            n_ctx = settings.get("n_ctx") or props.get("n_ctx")
            profile.context_window = int(n_ctx) if n_ctx else profile.context_window
            profile.slots = int(props["total_slots"]) if props.get("total_slots") else None
            caps = props.get("chat_template_caps")
            profile.supports_tools = not (isinstance(caps, dict) and
                                          caps.get("supports_tools") is False)
            if model in ("", None) or profile.problem.startswith("the server has no model"):
                profile.problem = ""  # llama-server answers whatever the model is called
            path = str(props.get("model_path") or "")
            if path and (model in ("", None) or model.startswith("gpt-")):
                profile.model = re.sub(r"\.gguf$", "", path.rsplit("/", 1)[-1])
        if profile.problem.startswith("the server has no model") and \
                profile.kind == "OpenAI-compatible":
            # A server of unknown kind may answer whatever the model is called: say it in the
            # log only, not as a banner.
            log.warning("provider %s: %s", base_url, profile.problem)
            profile.problem = ""
        if profile.kind == "Ollama" and profile.context_window is None:
            profile.context_window = ollama_window(client, root, model)
        if profile.context_window is None:
            lm = get_json(client, f"{root}/api/v0/models")
            for m in (lm or {}).get("data") or []:
                if m.get("id") == model:
                    profile.kind = "LM Studio"
                    window = m.get("loaded_context_length") or m.get("max_context_length")
                    profile.context_window = int(window) if window else None
    return profile


def get_json(client, url: str, **kwargs) -> dict | None:
    try:
        response = client.post(url, **kwargs) if "json" in kwargs else client.get(url)
        if response.status_code == 200 and "json" in response.headers.get("content-type", ""):
            value = response.json()
            return value if isinstance(value, dict) else None
    except (httpx2.HTTPError, ValueError):
        pass
    return None


def ollama_window(client, root: str, model: str) -> int | None:
    """num_ctx when the model sets it, else Ollama's default (its /v1 cannot change it)."""
    shown = get_json(client, f"{root}/api/show", json={"model": model})
    if not shown:
        return None
    found = re.search(r"num_ctx\s+(\d+)", str(shown.get("parameters") or ""))
    if found:
        return int(found.group(1))
    trained = next((v for k, v in (shown.get("model_info") or {}).items()
                    if k.endswith(".context_length")), None)
    return min(int(trained), OLLAMA_DEFAULT_CTX) if trained else OLLAMA_DEFAULT_CTX


def uses_openai(config) -> bool:
    """Whether an OpenAI-compatible server answers (a key or base URL is set), not offline."""
    return bool(config.get("OPENAI_API_KEY") or config.get("OPENAI_BASE_URL"))


def profile_for(config) -> Profile:
    """The provider's profile, settings over what the server reports; cached per process."""
    if not uses_openai(config):
        return Profile("offline demo model", "nimbus-offline",
                       context_window=config.get("NIMBUS_CONTEXT_WINDOW"),
                       slots=config.get("NIMBUS_PROVIDER_SLOTS"))
    base_url, model = config.get("OPENAI_BASE_URL") or "", config.get("NIMBUS_MODEL") or ""
    key = (base_url, model)
    now = time.monotonic()
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is None or (not cached[1].reachable and now - cached[0] > RETRY_UNREACHABLE):
        try:
            found = probe(base_url, model, config.get("OPENAI_API_KEY"))
        except Exception as error:  # a server answering nonsense must not break a page
            found = Profile(guess_kind(base_url), model, problem=f"{base_url} answered "
                            f"unexpectedly ({type(error).__name__})")
        if found.problem:
            log.warning("provider %s: %s", found.label, found.problem)
        if not found.supports_tools:
            log.warning("provider %s: %s; answering without tools (llama-server: --jinja with "
                        "a template that has tools, --chat-template-file, gives them)",
                        found.label, NO_TOOLS_LOGGED)
        with _LOCK:
            cached = _CACHE[key] = (now, found)
    found = cached[1]
    return Profile(found.kind, found.model,
                   config.get("NIMBUS_CONTEXT_WINDOW") or found.context_window,
                   config.get("NIMBUS_PROVIDER_SLOTS") or found.slots, found.reachable,
                   found.problem, found.supports_tools)


def announce(app, fit_tools=None) -> None:
    """Say at start which provider and model answer; a misconfiguration is a warning.
    `fit_tools(config, profile)` says which tools a window too small for all of them gets."""
    config = app.config
    if app.testing and "OPENAI_BASE_URL" not in os.environ:
        return  # tests point the app at their own fakes later
    found = profile_for(config)
    where = config.get("OPENAI_BASE_URL") or ("api.openai.com" if found.kind == "OpenAI" else "")
    if found.problem or not found.reachable:
        log.warning("provider: %s%s: %s", found.label, f" at {where}" if where else "",
                    found.problem)
    else:
        fit = fit_tools(config, found) if fit_tools and found.supports_tools else None
        log.info("provider: %s%s (%s)", found.label, f" at {where}" if where else "",
                 start_details(found, config, fit))


def start_details(found: Profile, config, fit=None) -> str:
    """What an operator needs at start: the window, the slots, the tools the window holds (`fit`,
    context.fit_tools), the reply cap and deadlines."""
    if found.kind == "offline demo model":
        return "embedded: no server, no key"
    window = f"context window {found.context_window:,} tokens" if found.context_window else \
        "context window not reported (NIMBUS_CONTEXT_WINDOW sets it)"
    slots = f"{found.slots} slot{'s' if found.slots != 1 else ''}" if found.slots else \
        "slots not reported (no limit; NIMBUS_PROVIDER_SLOTS sets one)"
    first = min(config.get("NIMBUS_FIRST_TOKEN_TIMEOUT") or 30.0,
                config.get("NIMBUS_PROVIDER_TIMEOUT") or 60.0)  # as the provider takes it
    reserve = found.output_reserve(config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024)
    tools = "tools offered" if found.supports_tools else "no tools (the template has none)"
    if fit is not None and fit.left_out:
        tools = f"{len(fit.specs)} of {fit.offered} tools offered ({fit.words()})" if fit.specs \
            else f"no tools ({fit.words()})"
    return (f"{window}, {slots}, {tools}, replies up to {reserve:,} tokens; deadlines: first token "
            f"{first:g} s, silence mid-reply "
            f"{config.get('NIMBUS_IDLE_TIMEOUT') or first:g} s, pace at least "
            f"{config.get('NIMBUS_MIN_TOKENS_PER_SECOND') or 1.0:g} tokens/s")


def learn_window(config, n_ctx: int) -> None:
    """A context-length refusal said the window: keep it for the next requests."""
    key = (config.get("OPENAI_BASE_URL") or "", config.get("NIMBUS_MODEL") or "")
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            cached[1].context_window = n_ctx


def forget() -> None:
    """Ask again next time (tests, and a changed configuration)."""
    with _LOCK:
        _CACHE.clear()
