"""Each package's init_app fills the extension points of webapp/hooks.py once, however many apps
a process builds."""
from webapp import hooks
from webapp.agent.tools import REGISTRY
from webapp.context.assemble import assemble
from webapp.storage import create_conversation

from .conftest import make_app


def wired() -> dict:
    return {"tools": list(hooks.TOOLS), "after_turn": list(hooks.AFTER_TURN),
            "offline": list(hooks.OFFLINE_TASKS), "jobs": list(hooks.JOBS),
            "sections": list(hooks.SECTION_SOURCES), "reservations": list(hooks.RESERVATIONS)}


def test_a_second_app_registers_nothing_twice(app, tmp_path):
    before = wired()
    make_app(tmp_path / "second.db")
    assert wired() == before
    assert REGISTRY is hooks.TOOLS and "lookup_order" in REGISTRY and "save_memory" in REGISTRY
    assert [s.__name__ for s in hooks.SECTION_SOURCES] == ["memory_section", "summary_section"]
    assert len(set(hooks.AFTER_TURN)) == len(hooks.AFTER_TURN) == 2


def test_the_system_prompt_reaches_assembly_through_its_hook(app, alex):
    plan = assemble(create_conversation(alex), app.config)
    assert plan.messages[0]["role"] == "system" and "support agent" in plan.messages[0]["content"]

