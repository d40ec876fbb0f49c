"""A chat app's message tree: the branch it showed last, and its other branches as versions.

Claude (`parent_message_uuid`), Open WebUI (`parentId`), ChatGPT (`parent`) and LibreChat
(`parentMessageId`) keep retries and edits as siblings; the conversation Nimbus imports is the one
path the person was last looking at, and the other branches become versions of the turn where
each leaves it (webapp/branches.py), read the same way for every app.
"""
from .importer import Checked, InvalidImport


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


def other_branches(active: Checked, leaves, read) -> tuple[list[tuple[int, Checked]], set]:
    """Every other leaf's branch (a regenerated answer, an edited question) as (the turn where it
    leaves the imported path, its whole transcript), and the nodes they hold. `read(leaf)` gives
    a leaf's nodes from the root and its transcript; a branch that does not read as a transcript,
    or only goes on past the path's end, stays out (and is counted as left out)."""
    versions, kept = [], set()
    for leaf in leaves:
        try:
            nodes, other = read(leaf)
        except InvalidImport:
            continue
        pairs = list(zip(active.raw, other.raw))
        seq = next((i for i, (a, b) in enumerate(pairs) if a["messages"] != b["messages"]),
                   len(pairs))
        if seq == len(active.raw) == len(other.raw):  # a regenerated answer in the same words
            seq -= 1
        if seq < len(active.raw) and seq < len(other.raw):
            versions.append((seq, other))
            kept |= set(nodes)
    return versions, kept
