"""Access rules, in one place: who may read, change or re-tune which conversation, and what else.

Roles live per tenant. A customer (a guest too) reaches only their own conversations. Staff reach
every conversation of their own tenant, read-only, and each opening of a customer's conversation
is audited. Admins may also apply context settings, change the tenant's settings and shared
memories, and read the audit log. A refusal is a 404, so an id never tells whether it exists;
to a visitor who is not signed in (a guest) it is a `SignInWanted` 404, which the pages answer with
the sign-in form and `next=` back, whether the id exists or not.

Who may change a memory is the memory store's rule (`may_edit_memory` in
webapp/memories/store/rows.py), beside the scopes it reads: the memory pages import this module,
so it does not import them back.
"""
from functools import wraps

from flask import abort, g
from werkzeug.exceptions import NotFound

from .extensions import db
from .models import Conversation

OWN = "own"  # chat with it, rename, delete: the owner only
READ = "read"  # the viewer, the console's read-only page, what-if previews
APPLY = "apply"  # make previewed context settings the conversation's own


class SignInWanted(NotFound):
    """A refusal that signing in might lift: the visitor has no account signed in."""


def signed_in(user) -> bool:
    return user is not None and not user.is_guest


def refuse(user, conversation=None):
    """404 for a signed-in account or a guest's own row; a sign-in offer for anyone else."""
    if signed_in(user) or (user is not None and conversation is not None
                           and conversation.user_id == user.id):
        abort(404)
    raise SignInWanted()


def may(user, action: str, conversation) -> bool:
    """The access matrix; every route asks this, directly or through the helpers below."""
    if user is None or conversation is None or conversation.deleted_at is not None:
        return False  # a deleted conversation is gone for everyone (its owner may still undo)
    if conversation.user_id == user.id:
        return True
    if conversation.tenant_id != user.tenant_id or not user.is_staff:
        return False
    return action == READ or (action == APPLY and user.is_admin)


def get_conversation_or_404(conversation_id, action: str = READ, user=None) -> Conversation:
    """The conversation if `user` (default: the visitor) may do `action` to it; else 404."""
    user = user if user is not None else g.get("user")
    conversation = db.session.get(Conversation, str(conversation_id)[:64])
    if not may(user, action, conversation):
        refuse(user, conversation)
    if conversation.user_id != user.id:
        from .audit import record
        record(user, "opened conversation", conversation=conversation)
    return conversation


def is_staff(user) -> bool:
    return user is not None and user.is_staff


def is_admin(user) -> bool:
    return user is not None and user.is_admin


def staff_required(view):
    """Staff and admins only; a signed-in customer sees the page as missing, a guest the sign-in."""
    @wraps(view)
    def guarded(*args, **kwargs):
        if not is_staff(g.get("user")):
            refuse(g.get("user"))
        return view(*args, **kwargs)
    return guarded


def admin_required(view):
    @wraps(view)
    def guarded(*args, **kwargs):
        if not is_admin(g.get("user")):
            refuse(g.get("user"))
        return view(*args, **kwargs)
    return guarded


def init_app(app) -> None:
    @app.context_processor
    def access():
        return {"may": lambda action, conversation: may(g.get("user"), action, conversation),
                "is_staff": lambda: is_staff(g.get("user")),
                "is_admin": lambda: is_admin(g.get("user"))}
