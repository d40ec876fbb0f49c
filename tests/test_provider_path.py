"""Every model call goes through the app's provider: the one a test or the app installed answers."""
from webapp.context.summary.jobs import fold_summary
from webapp.context.summary.section import cached_summary
from webapp.extensions import db
from webapp.llm.messages import assistant_message, user_message
from webapp.llm.offline import OfflineModel
from webapp.memories.distiller.distil import MARKER, distil_conversation
from webapp.storage import create_conversation, finish_turn, start_turn

from .support import ask, run


class RecordingModel(OfflineModel):
    """The offline model, keeping each request's system prompt and the config it was built from."""

    def __init__(self):
        super().__init__()
        self.prompts: list[str] = []
        self.configs: list[dict] = []

    def stream(self, messages, tools):
        self.prompts.append(messages[0]["content"] if messages else "")
        return super().stream(messages, tools)


def long_conversation(user):
    """Twelve stored turns on a small budget: the first, with the name, falls out of the window."""
    conversation = create_conversation(user)
    conversation.settings = {"budget": 200}
    db.session.commit()
    for question in ["My name is Dara.", *["Just some small talk " + "x" * 80] * 11]:
        turn = start_turn(conversation, question)
        finish_turn(turn, [user_message(question), assistant_message("Noted.")], "answered", [],
                    {}, 0, 0)
    return conversation


def install(app) -> RecordingModel:
    model = RecordingModel()

    def factory(config):
        model.configs.append(dict(config))
        return model
    app.extensions["provider_factory"] = factory
    return model


def test_a_summary_fold_is_written_by_the_installed_provider(app, alex):
    conversation = long_conversation(alex)
    model = install(app)
    fold_summary(conversation.id)
    assert model.prompts and not any(MARKER in prompt for prompt in model.prompts)
    assert "Dara" in cached_summary(conversation).text


def test_the_distiller_asks_the_installed_provider_for_its_own_model(app, alex):
    app.config["NIMBUS_MEMORY_MODEL"] = "small-memory-model"
    _, conversation, _ = ask(alex, "My name is Dara.")
    model = install(app)
    assert distil_conversation(conversation.id).startswith("wrote 1")
    assert any(MARKER in prompt for prompt in model.prompts)
    assert model.configs[-1]["NIMBUS_MODEL"] == "small-memory-model"
    assert app.config["NIMBUS_MODEL"] != "small-memory-model"  # only that call's config


def test_the_cli_asks_the_installed_provider(app, runner):
    app.config["NIMBUS_OFFLINE_WORDS_PER_SECOND"] = 5
    model = install(app)
    run(runner, "ask", "Hello", "--user", "sam@example.com")
    assert model.prompts
    assert model.configs[-1]["NIMBUS_OFFLINE_WORDS_PER_SECOND"] == 0  # printed whole, unpaced
