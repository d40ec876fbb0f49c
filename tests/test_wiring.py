"""Each package's init_app fills the extension points of webapp/hooks.py once, however many apps
a process builds; the worker builds its app, and its queue, from the configuration."""
import os
import subprocess
import sys

from webapp import hooks
from webapp.agent.tools import REGISTRY
from webapp.context.assemble import assemble
from webapp.storage import create_conversation

from .support import make_app

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    assert sorted(h.__name__ for h in hooks.AFTER_TURN) == ["queue_distil", "queue_summary", "queue_title",
                                                             "queue_turn_vector"]
    assert len(set(hooks.AFTER_TURN)) == len(hooks.AFTER_TURN)


def test_the_system_prompt_reaches_assembly_through_its_hook(app, alex):
    plan = assemble(create_conversation(alex), app.config)
    assert plan.messages[0]["role"] == "system" and "support agent" in plan.messages[0]["content"]


def worker_queue(tmp_path, **env) -> str:
    """What `huey_consumer webapp.worker.huey` gets: the storage of the queue it would consume."""
    code = ("import webapp.worker as w\n"
            "s = w.huey.storage\n"
            "print(type(s).__name__, getattr(s, 'filename', ''), w.huey.immediate)\n")
    env = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NIMBUS_JOBS_DB")},
           "PYTHONPATH": ROOT, "DATABASE_URL": f"sqlite:///{tmp_path}/app.db", **env}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_worker_queue_is_the_file_nimbus_jobs_db_names(tmp_path):
    path = tmp_path / "queue.db"
    assert worker_queue(tmp_path, NIMBUS_JOBS_DB=str(path)) == f"SqliteStorage {path} False"
    assert path.exists()


def test_the_worker_queue_is_redis_when_redis_url_is_set(tmp_path):
    assert worker_queue(tmp_path, REDIS_URL="redis://127.0.0.1:6379/15").startswith("RedisStorage")


def test_the_worker_runs_behind_the_web_workers_for_the_cpu(tmp_path):
    """Its jobs (a 60 MB import's parsing) yield the CPU to the replies people wait for."""
    code = "import os\nbefore = os.nice(0)\nimport webapp.worker\nprint(before, os.nice(0))\n"
    env = {**os.environ, "PYTHONPATH": ROOT, "DATABASE_URL": f"sqlite:///{tmp_path}/app.db"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = map(int, done.stdout.split()[-2:])
    assert after == min(19, before + 10)
