"""Accounts: tenants and users (users.py), sign-in and guests (sign_in.py), passwords, emails,
the `flask users` commands and personal-data rights."""
from .emails import find_user  # noqa: F401  re-exported: what the app asks of accounts
from .users import (  # noqa: F401  re-exported: what the app asks of accounts
    create_guest, get_or_create_tenant, get_or_create_user, idle_guests,
    purge_idle_guests, seed_demo)


def init_app(app) -> None:
    from . import cli, personal_data_views, sign_in_links, views
    app.register_blueprint(views.bp)
    app.register_blueprint(personal_data_views.bp)
    app.register_blueprint(sign_in_links.bp)
    cli.init_app(app)
