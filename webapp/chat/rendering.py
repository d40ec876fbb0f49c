"""Answers from markdown to safe HTML: raw HTML in a reply shows as text, and nh3 keeps only harmless tags."""
import re

import markdown
import nh3
from markupsafe import Markup, escape
from pygments.formatters.html import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

ALLOWED_TAGS = {"p", "br", "hr", "strong", "em", "b", "i", "del", "code", "pre", "blockquote",
                "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
                "table", "thead", "tbody", "tr", "th", "td", "div", "span"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}, "span": {"data-language"}}
# Code blocks highlighted by Pygments (codehilite): its wrapper and token classes, and no others.
ALLOWED_CLASSES = {"div": {"codehilite"},
                   "span": {name for name in STANDARD_TYPES.values() if name} | {"code-language"}}
URL_SCHEMES = {"http", "https", "mailto"}


def sanitize_html(html: str) -> str:
    """Keep formatting only: no scripts, no event handlers, no javascript: or data: links."""
    return nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     allowed_classes=ALLOWED_CLASSES, url_schemes=URL_SCHEMES,
                     link_rel="noopener noreferrer nofollow")


class LabelledCode(HtmlFormatter):
    """Pygments' HTML with the block's language named above its code ("Python", "Bash"), as the
    chat apps people come from label theirs; a block that named none gets no label."""

    def __init__(self, lang_str: str = "", **options):
        super().__init__(**options)
        word = lang_str.removeprefix("language-")
        try:
            self.language = get_lexer_by_name(word).name if word and word != "text" else ""
        except ClassNotFound:
            self.language = word

    def wrap(self, source):
        if self.language:
            # Shown by CSS from the attribute, so copying the answer's text leaves the label out.
            yield 0, f'<span class="code-language" data-language="{escape(self.language)}"></span>'
        yield from super().wrap(source)


# Converters not in use, shared by every thread and greenlet: building one costs more than
# converting an answer, and a gevent worker runs each stream in a greenlet of its own (a
# thread-local one was built again for every reply's first words). pop() and append() are atomic.
IDLE_CONVERTERS: list[markdown.Markdown] = []


def new_converter() -> markdown.Markdown:
    # Code blocks are highlighted here, server-side, once the answer is whole (static/css/code.css).
    md = markdown.Markdown(
        extensions=["fenced_code", "codehilite", "sane_lists", "tables"],
        extension_configs={"codehilite": {"guess_lang": False, "pygments_formatter": LabelledCode}})
    # A reply's raw HTML is shown as text, never interpreted; nh3 below is the second guard.
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


def render_markdown(text: str) -> Markup:
    """A model's markdown as sanitized HTML, code blocks included."""
    try:
        md = IDLE_CONVERTERS.pop()
    except IndexError:
        md = new_converter()
    try:
        html = md.reset().convert(text or "")
    finally:
        IDLE_CONVERTERS.append(md)
    return Markup(sanitize_html(html))


def snippet(texts, query: str, width: int = 140) -> Markup:
    """A few words around the first match of the query's words, each match in <mark>."""
    words = sorted({w for w in re.findall(r"\w+", query.lower()) if len(w) > 2}, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.I) if words else None
    text = next((t for t in texts if t and pattern and pattern.search(t)), texts[0] if texts else "")
    text = " ".join((text or "").split())
    found = pattern.search(text) if pattern else None
    start = max(0, found.start() - width // 3) if found else 0
    piece = text[start:start + width]
    if start:
        piece = "…" + piece.split(" ", 1)[-1]
    if start + width < len(text):
        piece = piece.rsplit(" ", 1)[0] + "…"
    if pattern is None:
        return escape(piece)
    marked, last = [], 0
    for match in pattern.finditer(piece):
        marked += [escape(piece[last:match.start()]), Markup("<mark>%s</mark>") % match.group()]
        last = match.end()
    return Markup("").join(marked + [escape(piece[last:])])


def init_app(app) -> None:
    app.add_template_filter(render_markdown, "markdown")
    app.add_template_global(snippet)
