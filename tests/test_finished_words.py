"""The words finished: tool steps in one voice, code blocks named by their language."""
from webapp.chat.rendering import render_markdown
from webapp.chat.tool_steps import ToolStep, steps_of

from .support import ask


def test_listing_orders_reads_like_the_other_steps(alex):
    _, conversation, _ = ask(alex, "What are my orders?")
    [step] = steps_of(conversation.turns[0].messages)
    assert (step.label, step.detail) == ("Listed your orders", "5 orders")
    assert ToolStep("list_orders", {}).label == "Listing your orders…"


def test_a_ticket_step_without_its_number_still_reads_as_done():
    assert ToolStep("create_support_ticket", {}, {"status": "open"}).label == "Opened a support ticket"


def test_a_code_block_is_labelled_with_its_language():
    html = render_markdown("```py\nprint(1)\n```")
    assert '<span class="code-language" data-language="Python"></span><pre>' in html


def test_a_code_block_that_names_no_language_gets_no_label():
    assert "code-language" not in render_markdown("```\nplain\n```")


def test_a_language_pygments_does_not_know_is_named_as_written():
    assert 'data-language="nimbusql"' in render_markdown("```nimbusql\nSELECT 1\n```")
