"""Answers from markdown to safe HTML: raw HTML in a reply shows as text, and nh3 keeps only harmless tags."""
import markdown
import nh3
from markupsafe import Markup

ALLOWED_TAGS = {"p", "br", "hr", "strong", "em", "b", "i", "del", "code", "pre", "blockquote",
                "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
                "table", "thead", "tbody", "tr", "th", "td"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}}  # class: the fence's language
URL_SCHEMES = {"http", "https", "mailto"}


def sanitize_html(html: str) -> str:
    """Keep formatting only: no scripts, no event handlers, no javascript: or data: links."""
    return nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     url_schemes=URL_SCHEMES, link_rel="noopener noreferrer nofollow")


def render_markdown(text: str) -> Markup:
    """A model's markdown as sanitized HTML, code blocks included."""
    converter = markdown.Markdown(extensions=["fenced_code", "sane_lists", "tables"])
    # A reply's raw HTML is shown as text, never interpreted; nh3 below is the second guard.
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")
    return Markup(sanitize_html(converter.convert(text or "")))


def init_app(app) -> None:
    app.add_template_filter(render_markdown, "markdown")
