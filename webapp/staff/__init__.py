"""The shop's team: the console over every conversation, audit log, tenant settings, share links.

console.py and views.py are the console, settings.py and settings_views.py a tenant's settings,
shares.py the share links (and the signed-out page they open), feedback.py the newest answer
feedback.
Other packages import what is named below; nothing else (tests/test_layers.py holds the rule).
"""
from .shares import link_state, share_url

__all__ = ["link_state", "share_url"]


def init_app(app) -> None:
    from . import settings_views, shares, views
    app.register_blueprint(views.bp)
    app.register_blueprint(settings_views.bp)
    app.register_blueprint(shares.bp)
    app.register_blueprint(shares.public_bp)
    app.add_template_global(shares.link_state)
    app.add_template_global(shares.share_url)
