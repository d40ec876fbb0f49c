"""ChatGPT's citation markers as readable references: "[1]" in the answer and the sources listed
after it, from the message's metadata; a marker the metadata does not explain is removed.

Two generations of markers are in exports: private-use groups (U+E200 kind U+E202 ref… U+E201,
e.g. cite/turn0search3, explained by `metadata.content_references[].matched_text` with `items`),
with U+E203/U+E204/U+E206 marking the spans they support; and the older 【3†source】 (or
【4:0†source】, 【11†L1-L5】) placed by `metadata.citations[]` at `start_ix`/`end_ix`.
"""
import json
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

GROUP = re.compile(r" ?\ue200([^\ue200\ue201\ue202]*)((?:\ue202[^\ue200\ue201]*)?)\ue201")
SPAN_MARKS = re.compile("[\ue203\ue204\ue205\ue206]")
LEGACY = re.compile(r" ?【\d+(?::\d+)?†[^【】\n]{0,80}】")
TITLE_CHARS = 200


def cited(text: str, metadata: dict) -> str:
    """`text` with every marker a reference number or gone, and the sources after it."""
    if not any(mark in text for mark in ("\ue200", "\ue203", "\ue204", "\ue206", "†")):
        return text
    sources: list[tuple[str, str]] = []  # (url, title), numbered in the order first cited
    explained = explained_markers(metadata)
    legacy = legacy_markers(text, metadata)

    def number(found: list[tuple[str, str]]) -> str:
        numbers = []
        for url, title in found:
            known = next((i for i, (u, _) in enumerate(sources, 1) if u == url), None)
            if known is None:
                sources.append((url, title))
                known = len(sources)
            if known not in numbers:
                numbers.append(known)
        return "".join(f"[{n}]" for n in numbers)

    def group(match: re.Match) -> str:
        if match.group(1) == "entity":  # a named thing shown as its name: keep the word
            return entity_name(match)
        found = explained.get(match.group(0).strip()) if match.group(1) == "cite" else None
        return f" {number(found)}" if found else ""

    def old(match: re.Match) -> str:
        found = legacy.get(match.group(0).strip())
        return f" {number(found)}" if found else ""

    text = GROUP.sub(group, text)
    text = LEGACY.sub(old, text)
    text = SPAN_MARKS.sub("", text).replace("\ue200", "").replace("\ue201", "").replace("\ue202", "")
    text = text.removeprefix("\u200b")  # the zero-width space a searched answer opens with
    if not sources:
        return text
    listed = "\n".join(f"{n}. [{title}]({url})" for n, (url, title) in enumerate(sources, 1))
    return f"{text.rstrip()}\n\nSources:\n\n{listed}"


def entity_name(match: re.Match) -> str:
    """U+E200 entity U+E202 ["kind", "Name", …] U+E201 reads as the name."""
    try:
        value = json.loads(match.group(2)[1:].split("\ue202")[0])
    except ValueError:
        return ""
    name = value[1] if isinstance(value, list) and len(value) > 1 else None
    lead = " " if match.group(0).startswith(" ") else ""
    return lead + name if isinstance(name, str) else ""


def explained_markers(metadata: dict) -> dict[str, list[tuple[str, str]]]:
    """content_references: each cite marker's sources, as (url, title)."""
    out = {}
    for ref in as_list(metadata.get("content_references")):
        if not isinstance(ref, dict) or not isinstance(ref.get("matched_text"), str):
            continue
        items = [i for i in as_list(ref.get("items")) if isinstance(i, dict)] or [ref]
        found = [s for s in map(source, items) if s]
        if found:
            out.setdefault(ref["matched_text"].strip(), found)
    return out


def legacy_markers(text: str, metadata: dict) -> dict[str, list[tuple[str, str]]]:
    """citations[]: the 【…】 marker found at each one's start_ix/end_ix, with its source."""
    out = {}
    for citation in as_list(metadata.get("citations")):
        if not isinstance(citation, dict):
            continue
        start, end = citation.get("start_ix"), citation.get("end_ix")
        found = source(citation.get("metadata")) if isinstance(citation.get("metadata"), dict) \
            else None
        if found and isinstance(start, int) and isinstance(end, int) and 0 <= start < end:
            marker = text[start:end]
            if LEGACY.fullmatch(marker):
                out.setdefault(marker.strip(), []).append(found)
    return out


def source(item: dict) -> tuple[str, str] | None:
    """(url, title) of a cited web page; None for what names no page (a file, a hidden ref)."""
    url = item.get("url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        return None
    url = untracked(url)
    title = item.get("title") if isinstance(item.get("title"), str) else ""
    title = " ".join(title.replace("[", "(").replace("]", ")").split())[:TITLE_CHARS]
    return url.replace(" ", "%20").replace(")", "%29"), title or urlsplit(url).netloc


def untracked(url: str) -> str:
    """The URL without the utm_source=chatgpt.com ChatGPT adds to every link it cites."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not (k == "utm_source" and v == "chatgpt.com")]
    return urlunsplit(parts._replace(query=urlencode(query)))


def as_list(value) -> list:
    return value if isinstance(value, list) else []
