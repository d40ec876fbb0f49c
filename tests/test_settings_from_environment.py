"""Every setting can be given in the environment, as its own kind, and a wrong one is named."""
import pytest

from webapp import config as settings


def test_a_sign_in_link_lifetime_from_the_environment_is_a_number(monkeypatch):
    monkeypatch.setenv("NIMBUS_SIGN_IN_LINK_MINUTES", "5")
    assert settings.from_environment(settings.DEFAULTS)["NIMBUS_SIGN_IN_LINK_MINUTES"] == 5


@pytest.mark.parametrize("key", [k for k, v in settings.DEFAULTS.items()
                                 if isinstance(v, (bool, int, float))])
def test_every_typed_setting_reads_back_as_its_default_kind(monkeypatch, key):
    default = settings.DEFAULTS[key]
    monkeypatch.setenv(key, str(default).lower() if isinstance(default, bool) else str(default))
    value = settings.from_environment(settings.DEFAULTS)[key]
    assert value == default and type(value) is type(default)


@pytest.mark.parametrize("key, value", [("NIMBUS_SIGN_IN_LINK_MINUTES", "ten"),
                                        ("NIMBUS_PROVIDER_TIMEOUT", "60s"),
                                        ("NIMBUS_GUESTS", "maybe")])
def test_a_wrong_value_is_refused_with_the_settings_name(monkeypatch, key, value):
    monkeypatch.setenv(key, value)
    with pytest.raises(settings.BadSetting, match=key):
        settings.from_environment(settings.DEFAULTS)


def test_a_setting_without_a_default_reads_as_its_declared_kind(monkeypatch):
    monkeypatch.setenv("NIMBUS_CONTEXT_WINDOW", "4096")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    read = settings.from_environment(settings.DEFAULTS)
    assert read["NIMBUS_CONTEXT_WINDOW"] == 4096 and read["OPENAI_BASE_URL"].endswith("/v1")


def test_every_wrong_setting_is_named_at_once(monkeypatch):
    monkeypatch.setenv("NIMBUS_CONTEXT_WINDOW", "4k")
    monkeypatch.setenv("NIMBUS_GUESTS", "maybe")
    with pytest.raises(settings.BadSetting) as refused:
        settings.from_environment(settings.DEFAULTS)
    assert str(refused.value) == ("NIMBUS_CONTEXT_WINDOW='4k' is not a whole number; "
                                  "NIMBUS_GUESTS='maybe' is not true or false")


def test_the_settings_table_declares_every_setting_with_its_kind_and_default():
    fields = settings.Settings.model_fields
    assert set(fields) == set(settings.DEFAULTS)
    assert fields["NIMBUS_SIGN_IN_LINK_MINUTES"].annotation is int
    assert fields["NIMBUS_SIGN_IN_LINK_MINUTES"].default == 10


def test_the_context_policy_takes_its_defaults_from_the_settings():
    from webapp.context.plans import Policy
    policy = Policy()
    assert (policy.budget, policy.recent_turns, policy.max_age_days, policy.candidate_pool) == (
        settings.DEFAULTS["NIMBUS_HISTORY_BUDGET"], settings.DEFAULTS["NIMBUS_RECENT_TURNS"],
        settings.DEFAULTS["NIMBUS_MAX_AGE_DAYS"], settings.DEFAULTS["NIMBUS_IMPORTANCE_POOL"])


def test_a_wrong_value_stops_the_command_with_one_line_naming_it(tmp_path):
    import os
    import subprocess
    import sys
    env = {**os.environ, "NIMBUS_PROVIDER_TIMEOUT": "60s"}
    done = subprocess.run([sys.executable, "-m", "flask", "--app", "webapp", "routes"], cwd=tmp_path,
                          env={**env, "PYTHONPATH": os.getcwd()}, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == "Nimbus cannot start: NIMBUS_PROVIDER_TIMEOUT='60s' is not a number"
