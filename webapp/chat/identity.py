"""Who is asking: each browser gets its own guest customer in the demo shop, kept in a signed cookie."""
from flask import current_app, g, request, session

from ..accounts import create_guest
from ..extensions import db
from ..models import User


def init_app(app) -> None:
    app.before_request(load_user)


def load_user() -> None:
    """Put the browser's user in g.user, creating a guest (with the demo orders) on its first visit."""
    g.user = None
    if request.endpoint in (None, "static"):
        return
    user_id = session.get("user_id")
    user = db.session.get(User, user_id) if isinstance(user_id, int) else None
    if user is None:
        user = create_guest(current_app.config["NIMBUS_DEMO_TENANT"])
        session["user_id"] = user.id
        session.permanent = True
    g.user = user
