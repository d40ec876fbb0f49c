"""Memories about a person read in the third person, grammatically, or keep the person's words."""
import pytest

from webapp.memory.longterm.phrasing import fact_key, in_third_person


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
