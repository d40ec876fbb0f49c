"""The person's own page (/account): who they are, "Download my data" and "Delete my data"."""
import json

from flask import Blueprint, Response, g, render_template, request, session
from flask_login import logout_user

from .personal_data import delete_user_data, export_user_data

bp = Blueprint("personal_data", __name__)
CONFIRM_WORD = "DELETE"


@bp.get("/account")
def show_account():
    """Show the visitor's account with their data rights."""
    return render_template("accounts/account.html", confirm_word=CONFIRM_WORD)


@bp.get("/account/data.json")
def download_data():
    """Download everything stored about the visitor as one JSON file."""
    body = json.dumps(export_user_data(g.user), indent=2, ensure_ascii=False)
    return Response(body, mimetype="application/json", headers={
        "Content-Disposition": 'attachment; filename="nimbus-my-data.json"',
        "Cache-Control": "no-store"})


@bp.post("/account/delete")
def delete_data():
    """Delete the visitor's conversations, memories and account for good, once confirmed."""
    if request.form.get("confirm", "").strip() != CONFIRM_WORD:
        return render_template("accounts/account.html", confirm_word=CONFIRM_WORD,
                               error=f"Nothing deleted: type {CONFIRM_WORD} to confirm."), 422
    counts = delete_user_data(g.user, "the customer, in the browser")
    logout_user()
    session.clear()
    g.user = None
    return render_template("accounts/deleted.html", counts=counts)
