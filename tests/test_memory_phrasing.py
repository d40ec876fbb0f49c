"""Memories about a person read in the third person, grammatically, or keep the person's words."""
import pytest

from webapp.memories.distiller.phrasing import about, fact_key, in_note_form, in_third_person, to_you


@pytest.mark.parametrize("said, written", [
    ("I prefer email over phone.", "Alex prefers email over phone."),
    ("I don't want calls after 6pm.", "Alex doesn't want calls after 6pm."),
    ("I knew the courier.", "Alex knew the courier."),
    ("I met Sam at the shop.", "Alex met Sam at the shop."),
    ("I wanted a refund.", "Alex wanted a refund."),
    ("I usually go to the gym", "Alex usually goes to the gym"),
    ("I'm vegetarian", "Alex is vegetarian"),
    ("I really like my blue mug", "Alex really likes their blue mug"),
    ("remember that I always pay by card", "Alex always pays by card"),
    ("we always pay by invoice", "We always pay by invoice"),
    ("I fix bikes for a living", 'Alex said: "I fix bikes for a living"'),
])
def test_first_person_is_rewritten_or_quoted(said, written):
    assert in_third_person(said, "Alex") == written


def test_the_same_fact_in_other_words_of_its_writer_has_one_key():
    assert fact_key('Alex Rivera says: "We always pay by invoice."', "Alex Rivera") == \
        fact_key("We always pay by invoice.", "Alex Rivera")
    assert fact_key("We pay by card.") != fact_key("We pay by invoice.")


@pytest.mark.parametrize("said, noted, to_them, for_staff", [
    ("I prefer email over phone.", "Prefers email over phone.", "You prefer email over phone.",
     "Alex prefers email over phone."),
    ("I'm vegetarian", "Is vegetarian.", "You are vegetarian.", "Alex is vegetarian."),
    ("I really like my blue mug", "Really likes their blue mug.", "You really like your blue mug.",
     "Alex really likes their blue mug."),
    ("I don't want calls after 6pm", "Doesn't want calls after 6pm.",
     "You don't want calls after 6pm.", "Alex doesn't want calls after 6pm."),
    ("I fix bikes for a living", 'Said: "I fix bikes for a living"',
     'You said: "I fix bikes for a living"', 'Alex said: "I fix bikes for a living"'),
    ("We always pay by invoice", "We always pay by invoice.", "We always pay by invoice.",
     "We always pay by invoice."),
])
def test_a_note_is_written_without_a_subject_and_read_to_whoever_reads_it(
        said, noted, to_them, for_staff):
    assert in_note_form(said) == noted
    assert to_you(noted) == to_them and about(noted, "Alex") == for_staff


def test_an_older_third_person_memory_reads_the_same():
    assert to_you("Guest a1ab prefers email.", "Guest a1ab") == "You prefer email."
    assert about("Guest a1ab prefers email.", "Guest a1ab") == "Guest a1ab prefers email."
