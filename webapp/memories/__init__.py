"""Long-term memory: scoped memories, the distiller that writes them, recall, tools and opt-out.

Four sub-packages, one concern each: store/ (memory rows through a scope, revisions, sharing),
search/ (keywords, BM25, embeddings, their fusion, conversation search), distiller/ (what is kept
from a conversation) and panel/ (the pages). Other packages import what is named below, or the
tables in models.py; nothing else (tests/test_layers.py holds the rule).
"""
from .distiller.distil import distil_window
from .distiller.imported import leave_undistilled
from .distiller.phrasing import about, to_you
from .jobs import embed_conversation_job, embed_import_job, queue_distil
from .search import keyword_index
from .search.keyword_index import forget_deleted_words
from .search.index_queries import Indexed
from .search.keyword_tables import TURN_INDEX, TURN_TEXT
from .search.keywords import scored
from .search.lost_vectors import embed_turns_job, without_vector
from .store.revisions import Changer, history_of, memory_records
from .store.rows import InvalidMemory, delete_memory, remember, update_content
from .store.scopes import (ACCOUNT, ORDER, TENANT_WORD, InvalidScope, SessionScope, applies_to,
                           describe, scope_for_customer)
from .store.sharing import sharing_choice

__all__ = ["ACCOUNT", "ORDER", "TENANT_WORD", "Changer", "Indexed", "InvalidMemory",
           "InvalidScope", "SessionScope", "TURN_INDEX", "TURN_TEXT", "about", "applies_to",
           "delete_memory", "describe", "distil_window", "embed_conversation_job", "embed_import_job", "embed_turns_job",
           "forget_deleted_words", "history_of", "keyword_index", "leave_undistilled",
           "memory_records", "queue_distil", "remember", "scope_for_customer", "scored", "sharing_choice",
           "to_you", "update_content", "without_vector"]


def init_app(app) -> None:
    """Wire memory into the app: the memory section of every request (before any summary), the
    tools, the after-turn hooks and jobs (with the sweep for vectors an outage lost), the offline
    model's distiller, commands and pages."""
    from .. import hooks
    from ..agent import register_tools
    from ..jobs import register_jobs
    from . import block, cli, jobs, tools
    from .distiller import offline as offline_distiller
    from .panel import report_views, views
    from .search import lost_vectors
    hooks.add(hooks.SECTION_SOURCES, block.memory_section, first=True)
    register_tools(*tools.TOOLS)
    hooks.add(hooks.AFTER_TURN, jobs.queue_distil)
    hooks.add(hooks.AFTER_TURN, jobs.queue_turn_vector)
    register_jobs(*jobs.JOBS, *lost_vectors.JOBS)
    hooks.add(hooks.OFFLINE_TASKS, offline_distiller.distil_offline)
    cli.init_app(app)
    app.register_blueprint(views.bp)
    app.register_blueprint(report_views.bp)
