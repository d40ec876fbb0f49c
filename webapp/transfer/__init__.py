"""Export a conversation as JSON or Markdown, and import one back, atomically and validated.

export.py writes the formats, schema.py says what an import must be, loading.py reads a file as
JSON (or refuses it in one line), streaming.py reads one a conversation at a time (an export of
many is never held whole), importer.py checks and writes, formats.py and chat_apps.py read
other tools' files (OpenAI, ChatGPT, Claude, Open WebUI, ShareGPT) into the same checked shape,
parts.py reads content parts (words, or a marker naming a picture or file), citations.py turns
ChatGPT's citation markers into numbered sources, sources.py knows what an owner imported before
(so a retry adds no copies), batch.py imports files record by record and says what it skipped,
memories.py carries the memories a conversation gave its owner, with their history.
Other packages import what is named below; nothing else (tests/test_layers.py holds the rule).
"""
from .batch import Imported, ImportResult, import_each, read_files
from .export import FORMAT, VERSION, export_conversation, export_markdown, export_openai
from .importer import InvalidImport, import_all, queue_vectors, write
from .loading import load
from .formats import FORMATS, detect, import_conversation, parse
from .sources import not_yet_imported

__all__ = ["FORMAT", "FORMATS", "VERSION", "ImportResult", "Imported", "InvalidImport", "detect",
           "export_conversation", "export_markdown", "export_openai", "import_all",
           "import_conversation", "import_each", "load", "not_yet_imported", "parse",
           "queue_vectors", "read_files", "write"]


def init_app(app) -> None:
    """The export downloads, the /import upload and its job."""
    from . import views
    views.init_app(app)
