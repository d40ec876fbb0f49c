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
