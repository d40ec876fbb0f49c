"""Export a conversation as JSON or Markdown, and import one back, atomically and validated.

export.py writes the format, schema.py says what an import must be, importer.py reads and writes.
"""
from .export import FORMAT, VERSION, export_conversation, export_markdown
from .importer import InvalidImport, import_conversation, load, parse, write

__all__ = ["FORMAT", "VERSION", "InvalidImport", "export_conversation", "export_markdown",
           "import_conversation", "load", "parse", "write"]
