"""Accounts: tenants and users (users.py), sign-in and guests (sign_in.py), passwords, emails,
the `flask users` commands and personal-data rights.

sign_in_links.py signs in from a one-time link, lockout.py counts failed sign-ins, emails.py
keeps one spelling per address (a leaf: every command's --user reads it). Other packages import
what is named below; nothing else (tests/test_layers.py holds the rule).
"""
from .cli import ensure_demo_team
from .emails import find_user
from .sign_in import ask_to_sign_in, init_app as init_sign_in
from .sign_in_links import create_link
from .users import (create_guest, get_or_create_tenant, get_or_create_user, idle_guests,
                    purge_idle_guests, seed_demo)

__all__ = ["ask_to_sign_in", "create_guest", "create_link", "ensure_demo_team", "find_user",
           "get_or_create_tenant", "get_or_create_user", "idle_guests", "init_sign_in",
           "purge_idle_guests", "seed_demo"]


def init_app(app) -> None:
    from . import cli, personal_data_views, sign_in_links, views
    app.register_blueprint(views.bp)
    app.register_blueprint(personal_data_views.bp)
    app.register_blueprint(sign_in_links.bp)
    cli.init_app(app)
