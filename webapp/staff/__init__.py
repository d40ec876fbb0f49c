"""The shop's team: the console over every conversation, audit log, tenant settings, share links."""


def init_app(app) -> None:
    from . import settings_views, shares, views
    app.register_blueprint(views.bp)
    app.register_blueprint(settings_views.bp)
    app.register_blueprint(shares.bp)
    app.register_blueprint(shares.public_bp)
    app.add_template_global(shares.link_state)
    app.add_template_global(shares.share_url)
