"""The offline model holds a conversation: at least 95 % of the scenario suite's exchanges on topic."""
from .offline_scenarios import SCENARIOS, exchanges, play


def test_the_suite_has_sixty_exchanges():
    assert exchanges() >= 60


def test_the_offline_model_stays_on_topic(app, alex, capsys):
    missed = []
    for scenario in SCENARIOS:
        missed += [(scenario.name, say.text, answer, called)
                   for say, answer, called, ok in play(alex.tenant_id, scenario, app.config) if not ok]
    share = 1 - len(missed) / exchanges()
    with capsys.disabled():
        print(f"\noffline scenarios on topic: {exchanges() - len(missed)}/{exchanges()} ({share:.0%})")
    assert share >= 0.95, "\n".join(map(repr, missed))
