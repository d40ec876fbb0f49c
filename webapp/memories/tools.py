"""The model's memory tools: save_memory, search_memories, search_history (off with NIMBUS_MEMORY_TOOLS)."""
from ..agent import tool
from .search.conversations import search_turns
from .distiller.phrasing import in_note_form
from .search.recall import search
from .store.scopes import SCOPE_WORDS, TENANT_WORD, InvalidScope, SessionScope, describe
from .store.sharing import shares_memories
from .store.rows import InvalidMemory, remember

SEARCH_LIMIT = 5


def tools_on(config) -> bool:
    return bool(config.get("NIMBUS_MEMORY_TOOLS"))


@tool("save_memory",
      "Write something down for later conversations, when the customer asks you to remember it "
      "(\"remember that we always…\") or states a lasting preference.",
      {"content": {"type": "string", "description": "One short sentence in the third person, "
                   "e.g. 'Alex prefers email over phone.'"},
       "scope": {"type": "string", "enum": list(SCOPE_WORDS),
                 "description": "workspace: the shop as a whole; account: this customer's "
                 "account; order: one of their orders (give order_number)"},
       "order_number": {"type": "integer", "description": "With scope 'order': which order"},
       "personal": {"type": "boolean", "description": "true (default): applies only to this "
                    "customer; false: to everyone in the scope"}},
      required=["content"], enabled=tools_on)
def save_memory(context, args):
    user, config = context.user, context.config
    if not shares_memories(user, config):
        return {"saved": False, "memory_off": True,
                # Said to the model about the customer; the chat tells the customer as "you".
                "error": "the customer turned memory off, so nothing was saved; they can turn it "
                "back on in the memory panel"}
    word = str(args.get("scope") or TENANT_WORD)
    personal = args.get("personal") is not False
    if word == TENANT_WORD and not personal and not config["NIMBUS_MEMORY_CHAT_WRITES_WORKSPACE"]:
        personal = True  # a customer's words never become a rule for every other customer
    try:
        memory, created = remember(
            SessionScope.for_user(user), in_note_form(str(args["content"])), config,
            source="tool", word=word, personal=personal, order_number=args.get("order_number"),
            conversation_id=context.conversation.id, turn_seq=context.turn_seq)
    except (InvalidScope, InvalidMemory) as error:
        return {"saved": False, "error": str(error)}
    return {"saved": True, "id": memory.id, "content": memory.content,
            "scope": describe(memory), "already_known": not created}


@tool("search_memories",
      "Look up what earlier conversations established (older memories are not all in the "
      "prompt). Use it before saying you do not know something about the customer.",
      {"query": {"type": "string", "description": "What you are looking for"}},
      required=["query"], enabled=tools_on)
def search_memories(context, args):
    found, mode = search(SessionScope.for_user(context.user), str(args["query"]),
                         context.config, SEARCH_LIMIT)
    return {"mode": mode, "results": [{"id": m.id, "content": m.content, "scope": describe(m),
                                       "why": why} for m, why in found]}


@tool("search_history",
      "Search this customer's own earlier conversations (their questions and your answers). A "
      "result with inactive_branch true is from a branch not taken (an answer they had "
      "regenerated, a question they edited): it is not what the conversation now says.",
      {"query": {"type": "string", "description": "What you are looking for"}},
      required=["query"], enabled=tools_on)
def search_history(context, args):
    results, mode = search_turns(context.user, str(args["query"]), context.config, SEARCH_LIMIT)
    return {"mode": mode, "results": results}


TOOLS = (save_memory, search_memories, search_history)
