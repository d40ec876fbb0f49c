"""Operators are told the truth (webapp/logs.py): Nimbus's lines are printed timestamped from INFO
up however it is served, a start line names the provider, model, window and slots, and a
refused send is a warning."""
import io
import logging
import re

import pytest

from webapp import logs
from webapp.llm import profile
from webapp.llm.profile import announce

from .fakes.compat_servers import CompatServer

LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\] \[\d+\] \[INFO\] "
                  r"webapp\.llm\.profile: provider: up$")


@pytest.fixture
def bare_logging(monkeypatch):
    """Logging as gunicorn or `flask run` leave it: no root handler (pytest's capture is added
    when the test starts: `bare` takes it away), `webapp` untouched."""
    logger = logging.getLogger("webapp")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "propagate", True)
    level = logger.level
    yield lambda: monkeypatch.setattr(logging.getLogger(), "handlers", [])
    logger.setLevel(level)


def test_nimbus_lines_are_printed_from_info_with_a_timestamp(bare_logging):
    bare_logging()
    printed = io.StringIO()
    logs.configure("INFO", printed)
    logging.getLogger("webapp.llm.profile").info("provider: up")
    logging.getLogger("webapp.llm.profile").debug("not this one")
    assert LINE.match(printed.getvalue().strip()), printed.getvalue()


def test_a_second_app_in_one_process_prints_each_line_once(bare_logging):
    bare_logging()
    printed = io.StringIO()
    logs.configure("INFO", printed)
    logs.configure("INFO", printed)
    logging.getLogger("webapp.llm.profile").info("provider: up")
    assert printed.getvalue().count("provider: up") == 1


def test_a_host_that_configured_logging_keeps_its_handler(bare_logging, monkeypatch):
    host = logging.StreamHandler(io.StringIO())
    monkeypatch.setattr(logging.getLogger(), "handlers", [host])
    logger = logs.configure("INFO")
    assert logger.handlers == [] and logger.propagate and logger.level == logging.INFO


def test_an_unknown_log_level_is_refused_by_name():
    with pytest.raises(logs.BadLogLevel, match="NIMBUS_LOG_LEVEL='LOUD'"):
        logs.level_of("LOUD")


def test_the_start_line_names_the_provider_model_window_and_slots(app, monkeypatch, caplog):
    profile.forget()
    with CompatServer("llama-server") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model", NIMBUS_FIRST_TOKEN_TIMEOUT=30.0,
                          NIMBUS_PROVIDER_TIMEOUT=60.0, NIMBUS_IDLE_TIMEOUT=20.0)
        with caplog.at_level(logging.INFO, logger="webapp.llm.profile"):
            announce(app)
    profile.forget()
    line = next(r for r in caplog.records if r.getMessage().startswith("provider:"))
    text = line.getMessage()
    assert line.levelno == logging.INFO and "llama.cpp · fake-model" in text
    window, slots = server.quirks.window, server.quirks.slots
    assert f"context window {window:,} tokens" in text and f"{slots} slot" in text
    assert "first token 30 s, silence mid-reply 20 s" in text


def test_a_refused_send_is_logged_as_a_warning(app, guest, caplog):
    app.config["NIMBUS_MAX_RUNS"] = 0  # every send finds the worker busy
    with caplog.at_level(logging.WARNING, logger="webapp"):
        response = guest.post("/messages", data={"message": "Hello"},
                              headers={"HX-Request": "true"})
    assert response.status_code == 503
    assert any(r.levelno == logging.WARNING and "refused a send (HTTP 503)" in r.getMessage()
               for r in caplog.records)
