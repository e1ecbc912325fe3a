"""`rlcheck history`'s picture as data: every call the heat map (_draw_fleet), the line chart (_draw_lines) and plot()
make on matplotlib, recorded by a stand-in pyplot and pinned whole (sizes, colour scale, crosses on runs not passing,
bold red names, thinned dates, titles, `$` drawn as written), so a wrong panel, label or scale turns a test red
without comparing pixels (rlcheck.history)."""

from __future__ import annotations

import math
import sys
import types
from typing import Any

import pytest

from rlcheck import history
from rlcheck.history import FleetPanel, Point, Series


class Recorder:
    """Records every method call as (who, method, args, kwargs); returns what the drawing code reads back."""

    def __init__(self, log: list, name: str):
        self._log, self._name = log, name

    def __getattr__(self, method: str):
        def call(*args: Any, **kwargs: Any) -> Any:
            self._log.append((self._name, method, args, kwargs))
            return self._answer(method, args)
        return call

    def _answer(self, method: str, args: tuple) -> Any:
        if method == "imshow":
            return f"image of {self._name}"
        if method == "get_yticklabels":
            return [Recorder(self._log, f"{self._name} label {i}") for i in range(self._labels)]
        return None


class Axes(Recorder):
    def __init__(self, log: list, name: str):
        super().__init__(log, name)
        self._labels = 0

    def _answer(self, method: str, args: tuple) -> Any:
        if method == "set_yticklabels":
            self._labels = len(args[0])
        return super()._answer(method, args)


class Grid:
    """subplots' 2-D array of axes: the drawing code reads its first column, axes[:, 0]."""

    def __init__(self, axes: list[Axes]):
        self.axes = axes

    def __getitem__(self, key: tuple) -> list[Axes]:
        assert key == (slice(None), 0), key
        return self.axes


class Pyplot:
    def __init__(self):
        self.log: list = []
        self.fig = Recorder(self.log, "fig")

    def subplots(self, rows: int, cols: int, **kwargs: Any):
        self.log.append(("plt", "subplots", (rows, cols), kwargs))
        return self.fig, Grid([Axes(self.log, f"ax{i}") for i in range(rows)])

    def close(self, fig: Any) -> None:
        self.log.append(("plt", "close", (fig is self.fig,), {}))


R1, R2, R3 = "2026-11-01T00:00:00+00:00", "2026-11-01T01:00:00+00:00", "2026-11-02T00:00:00+00:00"
A = FleetPanel(check_id="gpu_bf16_gemm", unit="TFLOP/s", nodes=("n1", "n$2"), runs=(R1, R2),
               changes=((-0.1, None), (0.05, 0.2)), flagged=((False, True), (True, True)), highlighted=("n$2",))
B = FleetPanel(check_id="nccl_$bw", unit="GB/s", nodes=("m",), runs=(R3,), changes=((None,),), flagged=((False,),),
               highlighted=())


def _fleet_axis(ax: str, panel_grid, xs_per_row, nodes, bold, ticks, tick_labels, title):
    calls = [(ax, "imshow", (panel_grid,), {"aspect": "auto", "cmap": "RdBu", "vmin": -20, "vmax": 20,
                                            "interpolation": "nearest"})]
    calls += [(ax, "scatter", (xs, [y] * len(xs)), {"marker": "x", "color": "black", "s": 18, "linewidths": 1})
              for y, xs in enumerate(xs_per_row)]
    calls += [(ax, "set_yticks", (range(len(nodes)),), {}),
              (ax, "set_yticklabels", (nodes,), {"fontsize": "small"}),
              (ax, "get_yticklabels", (), {})]
    for i in bold:
        label = f"{ax} label {i}"
        calls += [(label, "set_color", ("darkred",), {}), (label, "set_fontweight", ("bold",), {})]
    calls += [(ax, "set_xticks", (ticks,), {}),
              (ax, "set_xticklabels", (tick_labels,), {"rotation": 30, "ha": "right", "fontsize": "small"}),
              (ax, "set_title", (title,), {"fontsize": "medium"}),
              ("fig", "colorbar", (f"image of {ax}",), {"ax": None, "label": "% vs band median", "fraction": 0.03})]
    return calls


def _without_ax_objects(log: list) -> list:
    """colorbar's ax= is the axes object itself: recorded as its name."""
    return [(who, m, args, {k: (v._name if isinstance(v, Recorder) and k == "ax" else v) for k, v in kw.items()})
            for who, m, args, kw in log]


def test_rules_table_history_draw_fleet_every_call():
    plt = Pyplot()
    fig = history._draw_fleet(plt, [A, B])
    assert fig is plt.fig
    expected = [("plt", "subplots", (2, 1), {"squeeze": False, "figsize": (11, 1.5 + 0.28 * 2 + 1.5 + 0.28 * 1)})]
    expected += _fleet_axis("ax0", [[-10.0, math.nan], [5.0, 20.0]], [[1], [0, 1]], ["n1", r"n\$2"], [1], [0, 1],
                            [R1[:16], R2[:16]],
                            "gpu_bf16_gemm: TFLOP/s against each node's own band (x: run not passing; 1 node(s) to "
                            "look at, worst first)")
    expected += _fleet_axis("ax1", [[math.nan]], [[]], ["m"], [], [0], [R3[:16]],
                            r"nccl_\$bw: GB/s against each node's own band (x: run not passing; 0 node(s) to look at, "
                            "worst first)")
    got = _without_ax_objects(plt.log)
    colorbars = [c for c in got if c[1] == "colorbar"]
    assert [c[3]["ax"] for c in colorbars] == ["ax0", "ax1"]
    assert [(w, m, a, {k: v for k, v in kw.items() if k != "ax"}) for w, m, a, kw in got] == [
        (w, m, a, {k: v for k, v in kw.items() if k != "ax"}) for w, m, a, kw in expected]


def test_rules_table_history_draw_fleet_thins_the_dates_under_a_long_run():
    runs = tuple(f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00" for i in range(30))
    panel = FleetPanel(check_id="c", unit="u", nodes=("n",), runs=runs, changes=((0.0,) * 30,),
                       flagged=((False,) * 30,), highlighted=())
    plt = Pyplot()
    history._draw_fleet(plt, [panel])
    ticks = history.run_ticks(runs)
    assert ("ax0", "set_xticks", (ticks,), {}) in plt.log and len(ticks) <= history.MAX_RUN_TICKS
    labels = next(c for c in plt.log if c[1] == "set_xticklabels")[2][0]
    assert labels == [runs[i][:16] for i in ticks] and labels[-1] == "2026-11-02T05:00"


def _point(created: str, figure: float | None, unit: str = "TFLOP/s", status: str = "PASS") -> Point:
    return Point(created=created, path=f"/h/{created}.json", status=status, figure=figure, unit=unit if figure else "")


def test_rules_table_history_draw_lines_every_call():
    gemm = Series(check_id="gpu_bf16_gemm", node="n$1", points=(_point(R1, 700.0), _point(R3, 690.5)))
    other = Series(check_id="gpu_bf16_gemm", node="n2", points=(_point(R2, 710.0), _point(R3, None)))
    bw = Series(check_id="nccl_allreduce", node=None, points=(_point(R2, 350.0, "GB/s"),))
    plt = Pyplot()
    assert history._draw_lines(plt, [gemm, other, bw]) is plt.fig
    legend = {"fontsize": "small", "loc": "upper left", "bbox_to_anchor": (1.01, 1.0)}
    ticks = {"rotation": 30, "ha": "right", "fontsize": "small"}
    assert plt.log == [
        ("plt", "subplots", (2, 1), {"figsize": (8, 8), "squeeze": False}),
        ("ax0", "plot", ([1], [350.0]), {"marker": "o", "label": "nccl_allreduce"}),
        ("ax0", "set_xticks", ([0, 1, 2],), {}),
        ("ax0", "set_xticklabels", ([R1, R2, R3],), ticks),
        ("ax0", "set_ylabel", ("GB/s",), {}),
        ("ax0", "set_title", ("rlcheck history: GB/s per run",), {}),
        ("ax0", "legend", (), legend),
        ("ax1", "plot", ([0, 2], [700.0, 690.5]), {"marker": "o", "label": r"gpu_bf16_gemm [n\$1]"}),
        ("ax1", "plot", ([1], [710.0]), {"marker": "o", "label": "gpu_bf16_gemm [n2]"}),
        ("ax1", "set_xticks", ([0, 1, 2],), {}),
        ("ax1", "set_xticklabels", ([R1, R2, R3],), ticks),
        ("ax1", "set_ylabel", ("TFLOP/s",), {}),
        ("ax1", "set_title", ("rlcheck history: TFLOP/s per run",), {}),
        ("ax1", "legend", (), legend)]


@pytest.fixture
def pyplot(monkeypatch) -> Pyplot:
    """A stand-in matplotlib whose pyplot records every call (plot() imports it by name)."""
    plt = Pyplot()
    mpl = types.ModuleType("matplotlib")
    mpl.use = lambda backend: plt.log.append(("matplotlib", "use", (backend,), {}))
    mpl.pyplot = plt
    monkeypatch.setitem(sys.modules, "matplotlib", mpl)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", plt)
    return plt


def test_rules_table_history_plot_lines_then_saves_and_closes(pyplot, tmp_path):
    found = history.History(series=(Series(check_id="c", node=None, points=(_point(R1, 1.0),)),), runs=1, errors=())
    out = tmp_path / "deep" / "er" / "h.png"
    assert history.plot(found, out) == out and out.parent.is_dir()
    assert pyplot.log[0] == ("matplotlib", "use", ("Agg",), {})
    assert pyplot.log[1][:3] == ("plt", "subplots", (1, 1))  # the line chart: one panel per unit
    assert pyplot.log[-3:] == [("fig", "tight_layout", (), {}), ("fig", "savefig", (out,), {"dpi": 100}),
                               ("plt", "close", (True,), {})]


@pytest.mark.parametrize(("nodes", "fleet"), [(history.LINES_UP_TO, False), (history.LINES_UP_TO + 1, True)])
def test_rules_table_history_plot_a_fleet_is_a_heat_map(pyplot, tmp_path, nodes, fleet):
    series = tuple(Series(check_id="c", node=f"n{i}", points=(_point(R1, 1.0), _point(R2, 1.0))) for i in range(nodes))
    assert history.plot(history.History(series=series, runs=2, errors=()), tmp_path / "h.png") == tmp_path / "h.png"
    assert any(c[1] == "imshow" for c in pyplot.log) is fleet
    assert any(c[1] == "plot" for c in pyplot.log) is not fleet


def test_rules_table_history_plot_nothing_measured_draws_nothing(pyplot, tmp_path):
    found = history.History(series=(Series(check_id="c", node=None, points=(_point(R1, None),)),), runs=1, errors=())
    assert history.plot(found, tmp_path / "h.png") is None and pyplot.log == []


def test_rules_table_history_plot_without_matplotlib_is_none(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it raises ImportError
    found = history.History(series=(Series(check_id="c", node=None, points=(_point(R1, 1.0),)),), runs=1, errors=())
    assert history.plot(found, tmp_path / "h.png") is None and not (tmp_path / "h.png").exists()


def _measured(node: str | None, *points: Point, check_id: str = "c") -> Series:
    return Series(check_id=check_id, node=node, points=points)


def _at(created: str, change: float | None, unit: str = "TFLOP/s", status: str = "PASS") -> Point:
    """A point whose figure is 100 * (1 + change) against a median of 100 (no median: change None)."""
    figure = 100.0 * (1 + change) if change is not None else 100.0
    return Point(created=created, path="p", status=status, figure=figure, unit=unit,
                 median=100.0 if change is not None else None)


def _panels(*series: Series, every: bool = True) -> list[FleetPanel]:
    return history.fleet_panels(history.History(series=series, runs=3, errors=()), every=every)


def test_rules_table_history_fleet_rows_are_one_check_in_one_unit():
    panels = _panels(_measured("n1", _at(R1, 0.0)), _measured("n2", _at(R1, 0.0, unit="GB/s")),
                     _measured("n3", _at(R1, 0.0), check_id="other"))
    assert [(p.check_id, p.unit, p.nodes) for p in panels] == [("c", "GB/s", ("n2",)), ("c", "TFLOP/s", ("n1",)),
                                                                ("other", "TFLOP/s", ("n3",))]


def test_rules_table_history_fleet_small_check_first_does_not_hide_a_large_one():
    small = [_measured(f"s{i}", _at(R1, 0.0), check_id="a_small") for i in range(2)]
    large = [_measured(f"l{i}", _at(R1, 0.0), check_id="b_large") for i in range(history.LINES_UP_TO + 1)]
    assert [p.check_id for p in _panels(*small, *large, every=False)] == ["b_large"]
    assert [p.check_id for p in _panels(*small, *large)] == ["a_small", "b_large"]


def test_rules_table_history_fleet_order_without_a_band_and_by_node_name():
    # no band (change None) counts as 0: after a drop, before a rise; ties by node name, a node-less series first
    [panel] = _panels(_measured("up", _at(R1, 0.5)), _measured("none", _at(R1, None)), _measured("down", _at(R1, -0.2)))
    assert panel.nodes == ("down", "none", "up")
    [panel] = _panels(_measured("b", _at(R1, 0.0)), _measured("a", _at(R1, 0.0)), _measured("A", _at(R1, 0.0)),
                      _measured(None, _at(R1, 0.0)))
    assert panel.nodes == ("c", "A", "a", "b")


def test_rules_table_history_fleet_cells_of_missing_runs_and_other_units():
    [gb, tf] = _panels(_measured("n", _at(R1, -0.1), _at(R3, 0.2, unit="GB/s")), _measured("m", _at(R2, 0.0)))
    assert (tf.unit, tf.runs, tf.nodes) == ("TFLOP/s", (R1, R2, R3), ("m", "n"))  # n's latest: +20%
    assert tf.changes[1][0] == pytest.approx(-0.1) and tf.changes[1][1:] == (None, None)  # R3 is in GB/s
    assert tf.changes[0] == (None, 0.0, None)
    assert tf.flagged == ((False, False, False), (False, False, False))  # no run there: nothing to cross
    assert (gb.runs, gb.nodes) == ((R1, R3), ("n",))
    assert gb.changes[0][0] is None and gb.changes[0][1] == pytest.approx(0.2)  # R1 is in TFLOP/s


def test_rules_table_history_plot_a_fleet_draws_every_check_as_a_heat_map(pyplot, tmp_path):
    large = [_measured(f"l{i}", _at(R1, 0.0), check_id="b_large") for i in range(history.LINES_UP_TO + 1)]
    small = [_measured("s", _at(R1, 0.0), check_id="a_small")]
    history.plot(history.History(series=(*small, *large), runs=1, errors=()), tmp_path / "h.png")
    subplots = next(c for c in pyplot.log if c[1] == "subplots")
    assert subplots[2] == (2, 1)  # the small check too, as a heat map of its own
