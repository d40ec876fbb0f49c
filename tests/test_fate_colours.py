"""The viewer's six fates are told apart by more than hue: what the request sends stands 3:1 or
more from what it does not, every fate 3:1 from the page, badge words 4.5:1, in both schemes;
fates of one tier differ by a pattern too. Read from the stylesheets the pages use."""
import itertools
import re
from pathlib import Path

import pytest

from webapp.extensions import db

from .support import guest_user
from .viewer_support import refund_conversation

CSS = Path(__file__).resolve().parent.parent / "static" / "css"
SENT, UNSENT = ("full", "compacted", "pinned"), ("summarized", "dropped", "excluded")
SCHEMES = {"light": 0, "dark": 1}


def variables(path: Path, selector: str) -> dict[str, tuple[str, str]]:
    """--name: (light, dark) of the light-dark() colours declared in `selector { … }`."""
    blocks = re.findall(r"^" + re.escape(selector) + r"\s*\{(.*?)\}", path.read_text(), re.S | re.M)
    return {name: (light, dark) for block in blocks for name, light, dark in re.findall(
        r"--([\w-]+):\s*light-dark\((#[0-9a-fA-F]{3,6}),\s*(#[0-9a-fA-F]{3,6})\)", block)}


def luminance(colour: str) -> float:
    colour = colour.lstrip("#")
    if len(colour) == 3:
        colour = "".join(c * 2 for c in colour)
    channels = [int(colour[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def ratio(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


VIEWER = variables(CSS / "viewer.css", ".viewer")
PAGE = variables(CSS / "base.css", ":root")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_fate_stands_out_from_the_page(scheme):
    side, bg = SCHEMES[scheme], PAGE["bg"][SCHEMES[scheme]]
    for fate in SENT + UNSENT:
        assert ratio(VIEWER[fate][side], bg) >= 3, fate


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_sent_fate_beside_an_unsent_one_is_three_to_one_apart(scheme):
    side = SCHEMES[scheme]
    for sent, unsent in itertools.product(SENT, UNSENT):
        assert ratio(VIEWER[sent][side], VIEWER[unsent][side]) >= 3, (sent, unsent)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_fate_words_are_readable_on_badges_and_as_text(scheme):
    side, bg = SCHEMES[scheme], PAGE["bg"][SCHEMES[scheme]]
    for fate in SENT + UNSENT:
        on = VIEWER["on-sent" if fate in SENT else "on-unsent"][side]
        assert ratio(VIEWER[fate][side], on) >= 4.5, fate
        assert ratio(VIEWER[f"{fate}-ink"][side], bg) >= 4.5, fate


def test_fates_of_one_tier_differ_by_a_pattern_in_the_strip(guest):
    conversation = refund_conversation(guest_user(guest))
    conversation.settings = {"recent_turns": 1}
    db.session.commit()
    page = guest.get(f"/c/{conversation.id}/viewer").text
    strip = page[page.index('class="strip-svg"'):page.index("</svg>", page.index('class="strip-svg"'))]
    assert 'class="cell cell-full"' in strip and 'class="cell cell-compacted"' in strip
    patterned = set(re.findall(r'class="cell-pattern" data-fate="(\w+)"', strip))
    assert patterned == {"COMPACTED"}  # FULL beside it is plain
