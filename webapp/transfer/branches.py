"""The branch a chat app showed last: from the root to the newest leaf of a message tree.

Claude (`parent_message_uuid`) and LibreChat (`parentMessageId`) keep retries and edits as
siblings; the conversation Nimbus imports is the one path the person was last looking at.
"""
from .importer import InvalidImport


def latest_leaf_path(nodes: list[dict], id_key: str, parent_key: str, time_key: str,
                     where: str = "the conversation", current=None) -> list[dict]:
    """The nodes from the root to `current` when the file names one it holds, else to the
    latest leaf (by time, then file order); a cycle ends it."""
    for key in (id_key, parent_key):
        odd = next((m[key] for m in nodes if not isinstance(m.get(key), (str, int, type(None)))),
                   None)
        if odd is not None:
            raise InvalidImport(f"{where}: a message's {key} must be an id, got "
                                f"{type(odd).__name__}")
    by_id = {m.get(id_key): m for m in nodes if m.get(id_key)}
    parents = {m.get(parent_key) for m in nodes}
    order = {id(m): i for i, m in enumerate(nodes)}
    leaves = [m for m in nodes if m.get(id_key) not in parents] or nodes
    leaf = by_id.get(current) if isinstance(current, (str, int)) else None
    leaf = leaf or max(leaves, key=lambda m: (str(m.get(time_key) or ""), order[id(m)]))
    path, seen = [], set()
    while leaf is not None and id(leaf) not in seen:
        seen.add(id(leaf))
        path.append(leaf)
        leaf = by_id.get(leaf.get(parent_key))
    return path[::-1]
