"""Export a conversation from the chat page, and import files in the browser.

A customer imports into their own account; staff may import into a customer of their shop
(audited), never into another shop. Export follows the viewer's access rule (owner, or staff of
the shop, audited), so a link never tells whether a foreign conversation exists.
"""
import json
import re

from flask import (Blueprint, Response, abort, current_app, g, make_response, redirect,
                   render_template, request, url_for)
from flask_login import current_user
from werkzeug.exceptions import RequestEntityTooLarge

from ..extensions import db
from ..jobs import enqueue
from ..models import Import, User
from ..access import get_conversation_or_404
from .export import export_conversation, export_markdown, export_openai
from .formats import FORMATS
from .batch import ImportResult
from .importer import InvalidImport
from .jobs import import_job, is_stale, remove_uploads, stale_reason, upload_paths
from ..security import refuse_http_error, refusal

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
    """Save the uploaded files and queue the job that imports them (jobs.py), then show the
    import's page, which follows its progress: the request never parses a file itself."""
    files = [f for f in request.files.getlist("file") if f.filename]
    fmt = request.form.get("format", "auto")
    try:
        if not files:
            raise InvalidImport("choose a file to import")
        if fmt not in FORMATS:
            raise InvalidImport(f"unknown format {fmt[:20]!r}")
        owner = import_owner(request.form.get("customer", "").strip())
    except InvalidImport as error:
        for file in files:
            file.close()
        return render_template("transfer/import.html", formats=FORMATS, result=None,
                               error=f"Nothing was imported: {error}", chosen=fmt), 400
    record = Import(user_id=g.user.id, owner_id=owner.id, tenant_id=owner.tenant_id, options={
        "format": fmt, "strict": bool(request.form.get("strict")),
        "distil": bool(request.form.get("distil")), "files": [f.filename[:80] for f in files]})
    db.session.add(record)
    db.session.flush()  # its id names the files
    try:
        for file, path in zip(files, upload_paths(record)):
            try:  # a large upload is a temporary file already: copied, never read into memory
                file.save(path)
            finally:
                file.close()
    except OSError:
        db.session.rollback()
        remove_uploads(record)
        raise
    db.session.commit()
    enqueue(import_job, record.id)
    return redirect(url_for("transfer.show_progress", import_id=record.id), 303)


def own_import_or_404(import_id: str) -> Import:
    """The visitor's own import; anyone else's (or none) is the same 404."""
    record = db.session.get(Import, import_id) if re.fullmatch(r"[0-9a-f]{32}", import_id) else None
    user = g.get("user")
    if record is None or user is None or record.user_id != user.id:
        abort(404)
    return record


def progress_context(record: Import) -> dict:
    """What the progress partial shows: how far the job got, or what it stored, or why it failed."""
    failed = record.status == "failed" or is_stale(record)
    return {"imp": record, "failed": failed, "owner": db.session.get(User, record.owner_id),
            "error": (record.error or stale_reason(record)) if failed else None,
            "result": ImportResult.from_json(record.result) if record.status == "done" else None}


@bp.get("/imports/<import_id>")
def show_progress(import_id):
    """The import's page: its progress while the job runs, then its result, and the form."""
    record = own_import_or_404(import_id)
    return render_template("transfer/import.html", formats=FORMATS,
                           chosen=record.options.get("format"), **progress_context(record))


@bp.get("/imports/<import_id>/progress")
def progress(import_id):
    """The progress partial the page polls every second until the import is done or failed."""
    record = own_import_or_404(import_id)
    response = make_response(render_template("transfer/_progress.html", **progress_context(record)))
    response.headers["Cache-Control"] = "no-store"
    return response


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
    """The import form takes files far larger than any other request (MAX_CONTENT_LENGTH), from
    a signed-in account: a guest costs nobody a sign-up, so their upload is any request's size."""
    if request.endpoint == "transfer.upload" and current_user.is_authenticated \
            and not current_user.is_guest:
        request.max_content_length = current_app.config["NIMBUS_IMPORT_MAX_BYTES"]


@bp.errorhandler(RequestEntityTooLarge)
def refuse_large_upload(error):
    """Over the size limit: a guest is told that an account imports larger files."""
    if current_user.is_authenticated and not current_user.is_guest:
        return refuse_http_error(error)
    limit = current_app.config["MAX_CONTENT_LENGTH"] / 1e6
    return refusal(f"A guest imports files up to {limit:.0f} MB. Sign up or sign in to import "
                   f"larger ones (up to {current_app.config['NIMBUS_IMPORT_MAX_BYTES'] / 1e6:.0f} "
                   "MB).", 413)


def init_app(app) -> None:
    from ..jobs import register_jobs
    from . import jobs
    app.register_blueprint(bp)
    register_jobs(*jobs.JOBS)  # a worker killed mid-import: the sweep queues it again
    # First of all: the CSRF check and the request checks read the form, which parses the body.
    app.before_request_funcs.setdefault(None, []).insert(0, allow_large_uploads)
