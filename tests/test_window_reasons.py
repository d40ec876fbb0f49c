"""A turn left out because the model's window, not the conversation's budget, was the limit says
so in the viewer: "over the 3,000-token budget" read as a mystery where the window had squeezed
the history to two or three turns."""
from .support import ask, guest_user

LONG = "My parcel came late and the box was crushed, so I am writing it all down. " * 8


def reasons(guest, conversation) -> list[str]:
    turns = guest.get(f"/c/{conversation.id}/viewer.json").json["turns"]
    return [t["reason"] for t in turns if t["fate"] == "DROPPED"]


def conversation_of(guest, turns=6):
    _, conversation, _ = ask(guest_user(guest), LONG)
    for _ in range(turns - 1):
        ask(conversation.user, LONG, conversation)
    return conversation


def test_a_turn_the_window_left_out_names_the_window(app, guest):
    conversation = conversation_of(guest)
    assert reasons(guest, conversation) == [], "the 3,000-token budget holds them all"
    app.config["NIMBUS_CONTEXT_WINDOW"] = 2048
    said = reasons(guest, conversation)
    assert said and all("3,000 set, cut to fit the model's 2,048-token window" in r
                        for r in said), said


def test_a_turn_the_budget_left_out_names_only_the_budget(app, guest):
    conversation = conversation_of(guest)
    conversation.settings = {"budget": 300}
    app.config["NIMBUS_CONTEXT_WINDOW"] = 32768
    said = reasons(guest, conversation)
    assert said and all("window" not in r for r in said), said
