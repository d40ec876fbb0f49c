"""The cost chart and the request gauge: totals, percentages and coordinates on known numbers."""
import pytest

from webapp.viewer.chart import BOTTOM, LEFT, PANEL_HEIGHT, RIGHT, TOP, WIDTH, cost_chart, nice_step
from webapp.viewer.gauge import request_gauge

PLOT_HEIGHT = PANEL_HEIGHT - TOP - BOTTOM


def test_totals_and_the_saving_in_words():
    chart = cost_chart([1, 2, 3, 4], [100, 150, 200, 250], [100, 300, 600, 1000])
    assert (chart.total_sent, chart.total_resend, chart.saved) == (700, 2000, 1300)
    assert chart.percent_sent == 35
    assert chart.sentence == ("This conversation sent 35% of the tokens a resend-everything chat "
                              "would have (700 of 2,000 prompt tokens over every model call; "
                              "1,300 saved).")


def test_per_turn_panel_coordinates():
    chart = cost_chart([1, 2, 3, 4], [100, 150, 200, 250], [100, 300, 600, 1000])
    per_turn = chart.panels[0]
    assert per_turn.max_value == 1000
    assert [t.value for t in per_turn.y_ticks] == [0, 250, 500, 750, 1000]
    plot_width = WIDTH - LEFT - RIGHT
    assert [x for x, _ in per_turn.sent] == [LEFT, round(LEFT + plot_width / 3, 1),
                                             round(LEFT + 2 * plot_width / 3, 1), LEFT + plot_width]
    baseline = TOP + PLOT_HEIGHT
    assert per_turn.y_ticks[0].position == baseline and per_turn.y_ticks[-1].position == TOP
    assert per_turn.resend[-1] == (LEFT + plot_width, TOP)  # 1000 of 1000: the top
    assert per_turn.sent[0][1] == baseline - PLOT_HEIGHT / 10  # 100 of 1000
    second = per_turn.markers[1]
    assert (second.turn, second.sent, second.resend) == (2, 150, 300)
    assert (second.x, second.sent_y, second.resend_y) == (per_turn.sent[1][0], per_turn.sent[1][1],
                                                          per_turn.resend[1][1])
    assert per_turn.sent_path.startswith(f"{LEFT},{baseline - PLOT_HEIGHT / 10:g} ")


def test_cumulative_panel_sits_below_and_adds_up():
    chart = cost_chart([1, 2, 3, 4], [100, 150, 200, 250], [100, 300, 600, 1000])
    cumulative = chart.panels[1]
    assert cumulative.top == PANEL_HEIGHT and chart.height == 2 * PANEL_HEIGHT
    assert cumulative.max_value == 2000
    assert cumulative.resend[-1][1] == PANEL_HEIGHT + TOP  # 2,000 of 2,000
    assert cumulative.sent[-1][1] == PANEL_HEIGHT + TOP + PLOT_HEIGHT * (1 - 700 / 2000)
    assert [t.label for t in cumulative.y_ticks] == ["0", "500", "1,000", "1,500", "2,000"]


def test_one_turn_is_centred_and_no_turns_is_said_plainly():
    single = cost_chart([1], [80], [80])
    assert single.panels[0].sent[0][0] == LEFT + (WIDTH - LEFT - RIGHT) / 2
    assert single.percent_sent == 100
    assert single.sentence.endswith("(80 of 80 prompt tokens over every model call; 0 saved). The two lines overlap: "
                                    "nothing had to be trimmed yet.")
    empty = cost_chart([], [], [])
    assert empty.panels == [] and empty.percent_sent is None
    assert empty.sentence == "No answered turns yet: nothing has been sent."


def test_turn_labels_thin_out_but_keep_the_last_turn():
    chart = cost_chart(list(range(1, 101)), [10] * 100, [20] * 100)
    labels = [t.label for t in chart.x_ticks]
    assert len(labels) <= 13 and labels[0] == "1" and labels[-1] == "100"
    assert not chart.markers


@pytest.mark.parametrize("value, step", [(0.3, 1), (1, 1), (3, 5), (12, 20), (240, 250),
                                         (250, 250), (251, 500), (4100, 5000)])
def test_nice_step(value, step):
    assert nice_step(value) == step


def test_gauge_places_the_budget_after_the_fixed_sections():
    gauge = request_gauge([("system", 300), ("memory", 100), ("history", 600)], budget=1600)
    assert (gauge.total, gauge.history, gauge.history_percent) == (1000, 600, 38)
    assert not gauge.over_budget
    # Scale: 400 fixed + 1,600 budget = 2,000 tokens across the bar.
    assert [(s.name, s.start, s.width) for s in gauge.segments] == [
        ("system", 0, 15), ("memory", 15, 5), ("history", 20, 30)]
    assert gauge.budget_mark == 100


def test_gauge_mark_moves_left_by_the_summarys_share_of_the_budget():
    gauge = request_gauge([("system", 100), ("summary", 50), ("history", 150)], budget=300,
                          history_budget=250)
    assert (gauge.reserved, gauge.history_percent, gauge.over_budget) == (50, 60, False)
    # Scale: 150 before the history + 250 for it = 400 tokens across the bar.
    assert [(s.start, s.width) for s in gauge.segments] == [(0, 25), (25, 12.5), (37.5, 37.5)]
    assert gauge.budget_mark == 100


def test_gauge_over_budget_stretches_past_the_mark():
    gauge = request_gauge([("system", 100), ("history", 300)], budget=100)
    assert gauge.over_budget and gauge.history_percent == 300
    assert gauge.segments[-1].start + gauge.segments[-1].width == 100
    assert gauge.budget_mark == 50
