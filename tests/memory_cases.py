"""Contradiction and duplication cases for long-term memory, shared by the tests and the bench.

Each case is what one person says, one conversation per line, each distilled before the next;
`active` are the notes that must then be remembered, `replaced` the ones that must no longer be
active (each kept in the history of the memory that replaced it). Typed as people type.
"""
from dataclasses import dataclass

from webapp.extensions import db
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.store.revisions import history_of
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import newest

from .support import ask


@dataclass(frozen=True)
class Case:
    said: tuple[str, ...]
    active: tuple[str, ...]
    replaced: tuple[str, ...] = ()


def contradiction(first, second, old, new):
    return Case((first, second), (new,), (old,))


CASES = [
    # a name, then another
    contradiction("My name is Dara.", "Actually my name is Alex.", "Name: Dara.", "Name: Alex."),
    contradiction("my name is sam", "sorry, my name is Sami", "Name: Sam.", "Name: Sami."),
    contradiction("Hi, I'm called Jo.", "Please call me Joanna from now on.", "Name: Jo.",
                  "Name: Joanna."),
    contradiction("My name is Lee. Thanks", "Oh, my name is Leigh, spelled with a g", "Name: Lee.",
                  "Name: Leigh."),
    contradiction("My name is Priya", "Update: my name is Priya Shah", "Name: Priya.", "Name: Priya."),
    Case(("My name is Dara.", "My name is Kim.", "My name is Robin."), ("Name: Robin.",),
         ("Name: Dara.", "Name: Kim.")),
    contradiction("My name is Max.", "no, call me Maxine", "Name: Max.", "Name: Maxine."),
    contradiction("I'm called Ben", "My name is Benedict btw", "Name: Ben.", "Name: Benedict."),
    # how to be contacted
    contradiction("Remember that I prefer email over phone.",
                  "Actually, please call me instead. I prefer phone calls.",
                  "Prefers email over phone.", "Prefers phone calls."),
    contradiction("I prefer email.", "please call me", "Prefers email.", "Prefers phone calls."),
    contradiction("I prefer phone calls", "Please email me instead", "Prefers phone calls.",
                  "Prefers email."),
    contradiction("I prefer text messages.", "Actually, I prefer email.", "Prefers text messages.",
                  "Prefers email."),
    contradiction("i prefer email over phone", "please text me, i never read my email",
                  "Prefers email over phone.", "Prefers text messages."),
    contradiction("I'd rather be emailed.", "No, please ring me.", "Would rather be emailed.",
                  "Prefers phone calls."),
    contradiction("Please email me.", "I'd rather be called.", "Prefers email.",
                  "Would rather be called."),
    contradiction("I prefer letters by post.", "Please email me from now on.",
                  "Prefers letters by post.", "Prefers email."),
    contradiction("I prefer email", "I prefer phone calls", "Prefers email.", "Prefers phone calls."),
    Case(("I prefer email.", "Please call me.", "Please text me."), ("Prefers text messages.",),
         ("Prefers email.", "Prefers phone calls.")),
    contradiction("Please call me.", "Please write to me.", "Prefers phone calls.", "Prefers letters."),
    contradiction("I prefer a phone call.", "ok, please email me", "Prefers a phone call.",
                  "Prefers email."),
    # where they live
    contradiction("I live in Lisbon.", "I've moved to Porto.", "Lives in Lisbon.", "Lives in Porto."),
    contradiction("I live in Berlin", "actually I live in Hamburg now", "Lives in Berlin.",
                  "Lives in Hamburg."),
    contradiction("My address is 12 Rua Augusta, Lisbon.", "My new address is 4 Elm Street, Leeds.",
                  "Address: 12 Rua Augusta, Lisbon.", "Address: 4 Elm Street, Leeds."),
    contradiction("I live at 9 Mill Lane.", "I just moved to 22 Harbour Road",
                  "Address: 9 Mill Lane.", "Address: 22 Harbour Road."),
    contradiction("I live in Paris.", "My address is 3 Rue Cler, Lyon.", "Lives in Paris.",
                  "Address: 3 Rue Cler, Lyon."),
    contradiction("I live in Oslo", "I moved to Bergen.", "Lives in Oslo.", "Lives in Bergen."),
    Case(("I live in Rome.", "I moved to Milan.", "I moved to Turin."), ("Lives in Turin.",),
         ("Lives in Rome.", "Lives in Milan.")),
    contradiction("I live in Cork", "no, I live in Dublin", "Lives in Cork.", "Lives in Dublin."),
    # sizes
    contradiction("I wear size M.", "I wear size L now.", "Size: M.", "Size: L."),
    contradiction("my size is s", "Actually my size is xs", "Size: S.", "Size: XS."),
    contradiction("I'm a size 10.", "I'm a size 12 these days", "Size: 10.", "Size: 12."),
    contradiction("I take size XL", "I wear a size L", "Size: XL.", "Size: L."),
    contradiction("I wear size 42", "My size is 44.", "Size: 42.", "Size: 44."),
    Case(("I wear size S.", "I wear size M.", "I wear size L."), ("Size: L.",),
         ("Size: S.", "Size: M.")),
    contradiction("I am a size M", "sorry, I am a size L", "Size: M.", "Size: L."),
    # the same fact again: one memory
    Case(("I prefer email over phone.", "I prefer email over phone."), ("Prefers email over phone.",)),
    Case(("My name is Alex.", "my name is Alex"), ("Name: Alex.",)),
    Case(("I live in Lisbon.", "I live in Lisbon"), ("Lives in Lisbon.",)),
    Case(("I wear size M.", "my size is m"), ("Size: M.",)),
    Case(("Remember that we pay by invoice.", "We pay by invoice."), ("We pay by invoice.",)),
    Case(("Remember that I prefer email.", "I prefer email!"), ("Prefers email.",)),
    Case(("We bill fortnightly.", "we bill fortnightly"), ("We bill fortnightly.",)),
    Case(("I always pay by card.", "Remember that I always pay by card."), ("Always pays by card.",)),
    Case(("Please call me.", "I prefer phone calls."), ("Prefers phone calls.",)),
    Case(("I prefer email. I prefer email.",), ("Prefers email.",)),
    # another person's words, quoted, are not the customer's facts
    Case(("My name is Alex. My sister wrote \"My name is Dara\" on the card.",), ("Name: Alex.",)),
    Case(("My name is Alex.", "The note said: \"My name is Kim, I live in Oslo.\""), ("Name: Alex.",)),
    Case(("I live in Lisbon.", "> I live in Paris\nthat's what the old form said"), ("Lives in Lisbon.",)),
    Case(("I wear size M.", "My friend told me “I wear size XL” but that's him."), ("Size: M.",)),
    Case(("I prefer email.", "The letter says \"please call me\" but that was my landlord."),
         ("Prefers email.",)),
]


def played(user, case: Case) -> tuple[list[str], dict[str, list[str]]]:
    """Say each line in its own conversation, distilling after each: (active notes, the earlier
    texts of each active note)."""
    for line in case.said:
        _, conversation, _ = ask(user, line)
        distil_conversation(conversation.id)
    db.session.expire_all()
    active = newest(SessionScope.for_user(user), 50)
    history = history_of(m.id for m in active)
    return [m.content for m in active], {m.content: [r.content for r in history.get(m.id, [])]
                                         for m in active}


def resolved(user, case: Case) -> tuple[bool, str]:
    """(whether the person's memories agree with what they last said, what was remembered)."""
    active, history = played(user, case)
    kept = sorted(set(case.active)) == sorted(a for a in active if a in case.active) \
        and len([a for a in active if a in case.active]) == len(case.active)
    extra = [a for a in active if a not in case.active]
    old = [text for texts in history.values() for text in texts]
    replaced = all(r not in active and r in old for r in case.replaced if r not in case.active)
    return kept and not extra and replaced, f"active {active}, history {old}"
