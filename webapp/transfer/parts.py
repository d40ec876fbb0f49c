"""The words of a message's content parts in every shape other tools write them, and a visible,
named marker ("[image: photo.png]") for a part that truly is not text, so no words are lost and
nothing that was not words is passed off as them.

Shapes read: OpenAI's {"type": "text", "text"}, LLaMA-Factory's {"type": "text", "value"},
{"content": …} (text or nested parts), Responses' input_text / output_text, refusals, and
ChatGPT's parts keyed by content_type.
"""
import re
from urllib.parse import unquote, urlparse

from .importer import InvalidImport

TEXT_KEYS = ("text", "value", "content")
TEXT_KINDS = {None, "text", "input_text", "output_text", "refusal", "audio_transcription"}
# A part's type (or ChatGPT's content_type) → what the marker calls it.
MEDIA = {"image_url": "image", "input_image": "image", "image": "image", "image_file": "image",
         "image_asset_pointer": "image", "input_audio": "audio", "audio": "audio",
         "audio_url": "audio", "audio_asset_pointer": "audio", "real_time_user_audio_video_asset_pointer":
         "audio", "video": "video", "video_url": "video", "file": "file", "input_file": "file",
         "document": "document"}
NAME_KEYS = ("filename", "file_name", "name", "title", "url", "asset_pointer", "file_id", "path")
MARKER = re.compile(r"\[[a-z_]+(?:: [^\]\n]{1,200})?\]")


def text_of(content, where: str) -> str:
    """OpenAI-style content: a string, or a list of parts whose words are kept and whose media
    become markers; a text part without any words refuses the message, naming it."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, dict):  # a single part where a list was meant
        content = [content]
    if isinstance(content, list):
        texts = (part_text(part, f"{where}, content[{i}]") for i, part in enumerate(content))
        return "\n".join(t for t in texts if t)
    raise InvalidImport(f"{where}, content: expected text or a list of parts, "
                        f"got {type(content).__name__}")


def part_text(part, where: str) -> str:
    """One content part as text: its words, or a marker naming what it is."""
    if isinstance(part, str) or part is None:  # a null part holds no words, nor harm
        return part or ""
    if not isinstance(part, dict):
        raise InvalidImport(f"{where}: expected text or an object, got {type(part).__name__}")
    kind = part.get("type", part.get("content_type"))
    kind = kind if isinstance(kind, str) else None
    if kind in MEDIA:
        return marker(MEDIA[kind], part)
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return part["refusal"]
    for key in TEXT_KEYS:
        value = part.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, (list, dict)):
            return text_of(value, where)  # nested parts
    if kind in TEXT_KINDS:
        raise InvalidImport(f"{where}: a {kind or 'content'} part without its words (no text, "
                            "value or content)")
    return marker(kind, part)


def marker(kind: str, part: dict) -> str:
    """'[image: photo.png]': what the part is and, when the file names it, which one."""
    name = file_name(part)
    return f"[{kind}: {name}]" if name else f"[{kind}]"


def file_name(part: dict) -> str | None:
    """The name a part gives its file: a name field, or the last segment of its path or URL."""
    places = [part, *(v for v in part.values() if isinstance(v, dict))]
    for place in places:
        for key in NAME_KEYS:
            value = place.get(key)
            if isinstance(value, str) and value.strip() and not value.startswith("data:"):
                return short_name(value)
    kind = part.get("type")
    value = part.get(kind) if isinstance(kind, str) else None  # {"type": "image_url", "image_url": "…"}
    if isinstance(value, str) and not value.startswith("data:"):
        return short_name(value)
    value = part.get("value")  # LLaMA-Factory: {"type": "image_url", "value": "data/1.jpg"}
    if isinstance(value, str) and not value.startswith("data:"):
        return short_name(value)
    return None


def short_name(value: str) -> str:
    """A path's or URL's last segment, one line, at most 80 characters."""
    path = value
    if "://" in value:
        url = urlparse(value)
        path = url.path if url.path.strip("/") else url.netloc  # file-service://file-abc
    name = unquote(path.rstrip("/").rsplit("/", 1)[-1]) or value
    return " ".join(name.replace("]", ")").split())[:80]


def only_placeholders(records: list[dict]) -> str | None:
    """The first marker, when no message of the turns holds a word but markers (or nothing) and
    no tool was called: such a conversation is unreadable, not worth storing."""
    first = None
    for record in records:
        for message in record["messages"]:
            if message.get("tool_calls") or message.get("role") == "tool":
                return None
            lines = [line.strip() for line in (message.get("content") or "").splitlines()]
            for line in filter(None, lines):
                if not MARKER.fullmatch(line):
                    return None
                first = first or line
    return first or "no text at all"
