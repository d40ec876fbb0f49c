"""Export a conversation from the chat page, and import files in the browser.

A customer imports into their own account; staff may import into a customer of their shop
(audited), never into another shop. Export follows the viewer's access rule (owner, or staff of
the shop, audited), so a link never tells whether a foreign conversation exists.
"""
import json
import re

from flask import Blueprint, Response, current_app, g, render_template, request

from ..extensions import db
from ..models import User
from ..plurals import plural
from ..access import get_conversation_or_404
from .export import export_conversation, export_markdown, export_openai
from .formats import FORMATS
from ..memories import leave_undistilled
from .batch import import_files
from .importer import InvalidImport, queue_vectors

bp = Blueprint("transfer", __name__)
EXPORTS = {"nimbus": ("application/json", "json"), "openai": ("application/json", "openai.json"),
           "markdown": ("text/markdown; charset=utf-8", "md")}


@bp.get("/c/<conversation_id>/export/<fmt>")
def export(conversation_id, fmt):
    """Download the conversation as Nimbus JSON, OpenAI messages or Markdown."""
    if fmt not in EXPORTS:
        return render_template("chat/not_found.html"), 404
    conversation = get_conversation_or_404(conversation_id)
    if fmt == "markdown":
        body = export_markdown(conversation)
    else:
        data = export_openai(conversation) if fmt == "openai" else export_conversation(conversation)
        body = json.dumps(data, indent=2, ensure_ascii=False)
    kind, suffix = EXPORTS[fmt]
    slug = re.sub(r"[^a-z0-9]+", "-", conversation.title.lower()).strip("-")[:40] or "conversation"
    return Response(body, mimetype=kind.split(";")[0], content_type=kind, headers={
        "Content-Disposition": f'attachment; filename="{slug}-{conversation.id[:8]}.{suffix}"',
        "Cache-Control": "no-store"})


@bp.get("/import")
def show_import():
    """Show the upload form: files, their format, and (staff) the customer they belong to."""
    return render_template("transfer/import.html", formats=FORMATS, result=None, error=None)


@bp.post("/import")
def upload():
    """Import the uploaded files conversation by conversation (or, strict, all or none) and list
    what was imported and what was skipped."""
    files = [f for f in request.files.getlist("file") if f.filename]
    fmt = request.form.get("format", "auto")
    strict = bool(request.form.get("strict"))
    try:
        if not files:
            raise InvalidImport("choose a file to import")
        if fmt not in FORMATS:
            raise InvalidImport(f"unknown format {fmt[:20]!r}")
        owner = import_owner(request.form.get("customer", "").strip())
        raws = []
        for file in files:
            try:  # a large upload is a temporary file: closed as soon as it is read
                raws.append((file.filename[:80], file.read()))
            finally:
                file.close()
        try:
            # Staff read customers' conversations; writing what the assistant will believe about
            # a customer (memories) or obey in their chats (instructions) is an admin's act.
            personal = owner.id == g.user.id or g.user.is_admin
            result = import_files(raws, owner, fmt, strict, personal=personal)
        except InvalidImport as error:  # a single file's refusal names it too
            raise InvalidImport(f"{raws[0][0]}: {error}" if len(raws) == 1 else str(error)) \
                from None
        if not request.form.get("distil"):
            leave_undistilled(result.conversations)
        queue_vectors(result.conversations, current_app.config)
    except InvalidImport as error:
        db.session.rollback()
        return render_template("transfer/import.html", formats=FORMATS, result=None,
                               error=f"Nothing was imported: {error}", chosen=fmt), 400
    if owner.id != g.user.id:
        from ..audit import record
        written = [plural(n, what) for what, n in (
            ("conversation instruction", result.personal["instructions"]),
            ("memory", result.personal["memories"])) if n]
        record(g.user, "imported conversations", customer=owner,
               detail=", ".join([plural(len(result.conversations), "conversation"), *written]
                                + ([f"{len(result.skipped)} skipped"] if result.skipped else [])
                                + ([f"{result.already} already imported"] if result.already else [])
                                + (["instructions and memories left out"] if result.withheld else [])))
        db.session.commit()
    return render_template("transfer/import.html", formats=FORMATS, result=result,
                           owner=owner, error=None, chosen=fmt)


def import_owner(email: str) -> User:
    """The visitor, or (staff only) the customer of their own shop with this email."""
    user = g.user
    if not email or email.lower() == user.email:
        return user
    if not user.is_staff:
        raise InvalidImport("only the shop's staff may import into another customer's account")
    customer = db.session.query(User).filter_by(email=email.lower(), tenant_id=user.tenant_id,
                                                role="customer").first()
    if customer is None:
        raise InvalidImport(f"no customer {email[:80]!r} in this shop")
    return customer


def allow_large_uploads() -> None:
    """The import form takes files far larger than any other request (MAX_CONTENT_LENGTH)."""
    if request.endpoint == "transfer.upload":
        request.max_content_length = current_app.config["NIMBUS_IMPORT_MAX_BYTES"]


def init_app(app) -> None:
    app.register_blueprint(bp)
    # First of all: the CSRF check and the request checks read the form, which parses the body.
    app.before_request_funcs.setdefault(None, []).insert(0, allow_large_uploads)
