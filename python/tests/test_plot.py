"""Tests of commlab.plot: crossovers against the CLI's summary.json, the charts' contents,
saving, and bad input.

The data are made here by the commlab binary (small EM3D sweeps, well under a second each):
$COMMLAB_BIN, else `commlab` on PATH, else target/release/commlab of the repository (or of
$CARGO_TARGET_DIR).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

REPO = Path(__file__).resolve().parents[2]
PLOT_PY = REPO / "python" / "commlab" / "plot.py"


def _load_plot():
    """commlab.plot from the installed package, or, where the package (its native extension)
    is not built, the module file itself: it imports nothing of the extension."""
    try:
        from commlab import plot

        return plot
    except ImportError:
        spec = importlib.util.spec_from_file_location("commlab_plot_standalone", PLOT_PY)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


plot = _load_plot()

SMALL = ["em3d", "--procs", "8", "--param", "iterations=2", "--param", "nodes=640"]
VARIANTS = ["sm", "sm-pf", "mp-int", "mp-poll", "bulk"]


def _commlab_bin() -> str:
    env = os.environ.get("COMMLAB_BIN")
    if env:
        return env
    found = shutil.which("commlab")
    if found:
        return found
    candidates = [REPO / "target" / "release" / "commlab"]
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.insert(0, Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "commlab")
    for c in candidates:
        if c.is_file():
            return str(c)
    pytest.fail(
        "no commlab binary: set COMMLAB_BIN, put `commlab` on PATH or build it (cargo build --release); "
        f"looked in {', '.join(str(c) for c in candidates)}"
    )


def _commlab(*args: str) -> None:
    done = subprocess.run([_commlab_bin(), *args], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"commlab {' '.join(args)} failed:\n{done.stderr}"


def _read_jsonl(path: Path) -> pd.DataFrame:
    with open(path) as f:
        return pd.json_normalize([json.loads(line) for line in f if line.strip()])


class Sweep:
    def __init__(self, out: Path):
        self.df = _read_jsonl(out / "results.jsonl")
        self.summary = json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="session")
def sweeps(tmp_path_factory) -> dict[str, Sweep]:
    """Three sweeps: a 1-D linear one (run with --jobs 2, so results.jsonl is in completion
    order), a grid with a log-spaced first key, and a grid whose first --vary key is not the
    first vary.* column (JSON keys are written sorted by name)."""
    base = tmp_path_factory.mktemp("sweeps")
    specs = {
        "line": ["--vary", "cross_traffic.rate_bytes_per_cycle=0:8:5", "--jobs", "2"],
        # --jobs 1: the app's variant order in the file, which the default-order tests read
        # (the default --jobs is the cores: lines in completion order).
        "grid": ["--vary", "messaging.send_overhead_cycles=10:1000:4:log", "--vary", "remote=0.1,0.5", "--jobs", "1"],
        "grid-remote-first": [
            "--vary",
            "remote=0.1,0.3,0.5",
            "--vary",
            "messaging.send_overhead_cycles=10,300,1000",
            "--jobs",
            "1",
        ],
    }
    out = {}
    for name, vary in specs.items():
        _commlab("sweep", *SMALL, *vary, "--out", str(base / name))
        out[name] = Sweep(base / name)
    return out


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> pd.DataFrame:
    """Plain `commlab run --variant all --json` results: no vary columns."""
    path = tmp_path_factory.mktemp("runs") / "em3d.jsonl"
    _commlab("run", *SMALL, "--variant", "all", "--json", "--out", str(path))
    return _read_jsonl(path)


def _summary_crossovers(s: Sweep) -> list[tuple]:
    """(fixed values..., a, b, x, y) of every crossover summary.json lists."""
    out = []
    for g in s.summary["groups"]:
        fixed = tuple(g["fixed"][k] for k in sorted(g["fixed"]))
        for c in g["crossovers"]:
            out.append((*fixed, c["a"], c["b"], c["x"], c["y"]))
    return out


def _python_crossovers(c: pd.DataFrame) -> list[tuple]:
    fixed = sorted(col for col in c.columns if col.startswith("vary."))
    return [tuple(r) for r in c[[*fixed, "variant_a", "variant_b", "x", "y"]].itertuples(index=False)]


def _same(got: list[tuple], want: list[tuple]) -> None:
    assert len(got) == len(want), f"{got} vs {want}"
    for g, w in zip(got, want):
        assert g[:-2] == w[:-2], f"{g} vs {w}"
        assert g[-2:] == pytest.approx(w[-2:], rel=1e-12, abs=0), f"{g} vs {w}"


# ---------------------------------------------------------------------------------------------
# Crossovers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["line", "grid", "grid-remote-first"])
def test_crossovers_equal_those_of_the_cli_summary(sweeps, name):
    s = sweeps[name]
    # The default x is the sweep's first --vary key, as in summary.json.
    c = plot.crossovers(s.df, variants=s.summary["variants"])
    assert c.attrs["x"] == "vary." + s.summary["x"]
    want = _summary_crossovers(s)
    _same(_python_crossovers(c), want)
    if name != "grid-remote-first":
        assert want, "the sweep should have crossovers, or this test checks nothing"
    # Without variants=, the same crossovers (pairs maybe named the other way round).
    d = plot.crossovers(s.df)

    def unordered(rows: list[tuple]) -> list[tuple]:
        return sorted((*r[:-4], tuple(sorted(r[-4:-2])), round(r[-2], 9)) for r in rows)

    assert unordered(_python_crossovers(d)) == unordered(want)


def test_crossovers_along_another_key(sweeps):
    """x= another varied key: the grid along remote, one group per send overhead; checked
    against the summary of the same grid swept with remote first."""
    s = sweeps["grid-remote-first"]
    for x in ["remote", "vary.remote"]:
        c = plot.crossovers(s.df, x=x, variants=VARIANTS)
        assert c.attrs["x"] == "vary.remote"
        _same(_python_crossovers(c), _summary_crossovers(s))
    c = plot.crossovers(s.df, x="messaging.send_overhead_cycles", variants=VARIANTS)
    assert list(c.columns) == ["vary.remote", "variant_a", "variant_b", "x", "y"]
    assert set(c["vary.remote"]) <= {0.1, 0.3, 0.5}


def _frame(curves: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    rows = [{"variant": v, "vary.k": x, "cycles": y} for v, pts in curves.items() for x, y in pts]
    return pd.DataFrame(rows)


def test_crossover_rules_on_hand_made_curves():
    # a: 0 -> 10, b: 6 -> 2 between x = 1 and 3: difference -6 -> 8, zero at t = 6/14.
    c = plot.crossovers(_frame({"a": [(1, 0), (3, 10)], "b": [(1, 6), (3, 2)]}))
    t = 6 / 14
    assert list(c[["variant_a", "variant_b"]].itertuples(index=False, name=None)) == [("a", "b")]
    assert c["x"][0] == pytest.approx(1 + 2 * t) and c["y"][0] == pytest.approx(10 * t)
    # b flat at 1, a zig-zags 0, 2, 0, 2 (rows out of order): crossings at 0.5, 1.5, 2.5.
    c = plot.crossovers(_frame({"a": [(3, 2), (0, 0), (2, 0), (1, 2)], "b": [(x, 1) for x in range(4)]}))
    assert list(c["x"]) == [0.5, 1.5, 2.5] and set(c["y"]) == {1.0}
    # Touching (equal at a sample, same order either side), alone or over several samples.
    assert plot.crossovers(_frame({"a": [(0, 2), (1, 1), (2, 2)], "b": [(0, 1), (1, 1), (2, 1)]})).empty
    assert plot.crossovers(_frame({"a": [(0, 2), (1, 1), (2, 1), (3, 2)], "b": [(0, 1), (1, 1), (2, 1), (3, 1)]})).empty
    # A run of ties between opposite signs: one crossing in its middle.
    c = plot.crossovers(
        _frame({"a": [(0, 0), (1, 1), (2, 1), (3, 1), (4, 3)], "b": [(0, 2), (1, 1), (2, 1), (3, 1), (4, 0)]})
    )
    assert list(zip(c["x"], c["y"])) == [(2.0, 1.0)]
    # Ties at the ends and identical curves are not crossings.
    assert plot.crossovers(_frame({"a": [(0, 1), (1, 2), (2, 3)], "b": [(0, 1), (1, 5), (2, 3)]})).empty
    assert plot.crossovers(_frame({"a": [(0, 3), (1, 1)], "b": [(0, 3), (1, 1)]})).empty
    # Only x values both have, with finite y, count: b lacks x = 1 and is NaN at x = 3.
    c = plot.crossovers(_frame({"a": [(1, 9), (2, 0), (3, 0), (4, 4)], "b": [(2, 2), (3, float("nan")), (4, 2)]}))
    assert list(c["x"]) == [3.0]


# ---------------------------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------------------------


def _variant_lines(ax) -> list[str]:
    return [line.get_label() for line in ax.get_lines() if line.get_label() != "crossover"]


def test_runtime_draws_one_line_per_variant_and_marks_the_crossovers(sweeps):
    s = sweeps["line"]
    fig = plot.runtime(s.df, variants=VARIANTS)
    assert isinstance(fig, Figure)
    [ax] = fig.axes
    assert _variant_lines(ax) == VARIANTS
    assert ax.get_xlabel() == "cross_traffic.rate_bytes_per_cycle"
    assert ax.get_ylabel() == "runtime (processor cycles)"
    assert ax.get_title().startswith("em3d: runtime vs cross_traffic.rate_bytes_per_cycle (alewife, 8 procs")
    assert ax.get_xscale() == "linear"
    # Each line goes through its variant's runs, by increasing x.
    for line in ax.get_lines():
        if line.get_label() in VARIANTS:
            rows = s.df[s.df["variant"] == line.get_label()].sort_values("vary.cross_traffic.rate_bytes_per_cycle")
            assert list(line.get_xdata()) == list(rows["vary.cross_traffic.rate_bytes_per_cycle"])
            assert list(line.get_ydata()) == list(rows["cycles"])
    # The crossover marks are the crossovers, with their labels.
    [marks] = [line for line in ax.get_lines() if line.get_label() == "crossover"]
    c = plot.crossovers(s.df, variants=VARIANTS)
    assert len(c) > 0
    assert list(marks.get_xdata()) == list(c["x"]) and list(marks.get_ydata()) == list(c["y"])
    texts = {t.get_text() for t in ax.texts}
    assert {f"{a}/{b}" for a, b in zip(c["variant_a"], c["variant_b"])} <= texts
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [*VARIANTS, "crossover"]


def test_runtime_of_a_grid_has_one_panel_per_combination_and_log_x(sweeps):
    s = sweeps["grid"]
    fig = plot.runtime(s.df)
    assert len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["remote=0.1", "remote=0.5"]
    assert "em3d: runtime vs messaging.send_overhead_cycles" in fig.get_suptitle()
    for ax in fig.axes:
        # Default order: first appearance (this sweep ran with --jobs 1: the app's order).
        assert _variant_lines(ax) == VARIANTS
        assert ax.get_xscale() == "log"  # 10..1000 geometrically, as the CLI decides
        assert ax.get_xlabel() == "messaging.send_overhead_cycles"
    assert plot.runtime(s.df, logx=False).axes[0].get_xscale() == "linear"
    # x along remote: three values 0.1..0.5 are not log-spaced; one panel per send overhead.
    fig = plot.runtime(sweeps["grid-remote-first"].df)
    assert [ax.get_xscale() for ax in fig.axes] == ["linear"] * 3
    assert fig.axes[0].get_xlabel() == "remote"


def test_runtime_curves_are_the_measured_points_joined_straight(sweeps):
    # Regression (issue 36, item 8): on a log x axis each curve was drawn through 32
    # interpolated points a segment, smoothing it between 3 to 5 measured ones.
    s = sweeps["grid"]
    x = "vary.messaging.send_overhead_cycles"
    for ax, remote in zip(plot.runtime(s.df).axes, [0.1, 0.5]):
        assert ax.get_xscale() == "log"
        for line in ax.get_lines():
            if line.get_label() not in VARIANTS:
                continue
            rows = s.df[(s.df["variant"] == line.get_label()) & (s.df["vary.remote"] == remote)].sort_values(x)
            assert list(line.get_xdata()) == list(rows[x].astype(float))
            assert list(line.get_ydata()) == list(rows["cycles"].astype(float))
    # A crossover half way along a segment in x sits half way across it on the screen.
    assert plot._drawn_x(505.0, [10.0, 1000.0]) == pytest.approx(100.0)
    assert plot._drawn_x(10.0, [10.0, 1000.0]) == 10.0


def test_runtime_into_given_axes_and_other_metrics(sweeps):
    s = sweeps["line"]
    fig = Figure()
    ax = fig.subplots()
    assert plot.runtime(s.df, ax=ax, variants=["bulk", "sm"], marks={"here": 3}) is fig
    assert _variant_lines(ax)[:2] == ["bulk", "sm"]
    assert "here" in {t.get_text() for t in ax.texts}
    fig = plot.runtime(s.df, y="counters.cycles_per_iteration")
    assert fig.axes[0].get_ylabel() == "counters.cycles_per_iteration"
    # Categorical variant column: its categories' order.
    df = s.df.assign(variant=pd.Categorical(s.df["variant"], categories=list(reversed(VARIANTS))))
    assert _variant_lines(plot.runtime(df).axes[0]) == list(reversed(VARIANTS))


def _bar_heights(ax) -> list[list[float]]:
    return [[p.get_height() for p in c] for c in ax.containers if isinstance(c, BarContainer)]


@pytest.mark.parametrize(
    "chart, prefix, layers, ylabel",
    [
        (
            "breakdown",
            "breakdown.",
            ["compute", "memory_ni_wait", "message_overhead", "synchronization"],
            "mean time per processor (processor cycles)",
        ),
        (
            "volume",
            "volume_bytes.",
            ["invalidates", "requests", "headers", "data", "cross_traffic"],
            "traffic volume (bytes)",
        ),
    ],
)
def test_bars_have_one_bar_per_variant_with_the_runs_values(sweeps, chart, prefix, layers, ylabel):
    s = sweeps["line"]
    x = "vary.cross_traffic.rate_bytes_per_cycle"
    draw = getattr(plot, chart)
    for at in [None, 8.0]:
        fig = draw(s.df, at=at, variants=VARIANTS)
        [ax] = fig.axes
        assert [t.get_text() for t in ax.get_xticklabels()] == VARIANTS
        assert ax.get_ylabel() == ylabel and ax.get_xlabel() == "variant"
        here = s.df[s.df[x] == (0.0 if at is None else at)].set_index("variant").loc[VARIANTS]
        heights = _bar_heights(ax)
        assert len(heights) == len(layers)  # one bar container per layer ...
        for layer, got in zip(layers, heights):  # ... with one bar per variant, the run's value
            assert got == pytest.approx(list(here[prefix + layer].astype(float)))
        at_text = "0" if at is None else "8"
        assert ax.get_title().endswith(f"cross_traffic.rate_bytes_per_cycle={at_text})")
        totals = {t.get_text() for t in ax.texts}
        assert len(totals) >= 1
    # A grid: one panel per combination of the other keys.
    fig = draw(sweeps["grid"].df)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == VARIANTS


@pytest.mark.parametrize("chart", ["breakdown", "volume"])
def test_bar_titles_lie_within_the_figure_at_the_default_size(sweeps, chart):
    # Regression (issue 36, item 8): a sweep's bar title (app, machine, processors and the
    # point shown) was one line wider than the default figure, clipped at both edges.
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    draw = getattr(plot, chart)
    for df in [sweeps["line"].df, sweeps["grid"].df]:
        fig = draw(df)
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        titles = [ax.title for ax in fig.axes if ax.get_title()]
        if fig.get_suptitle():
            titles.append(fig._suptitle)
        assert titles
        width = fig.bbox.width
        for t in titles:
            box = t.get_window_extent(renderer)
            assert box.x0 >= 0 and box.x1 <= width, f"{t.get_text()!r} spans {box.x0:.0f}..{box.x1:.0f} of {width:.0f}"
        # Nothing of the title is lost to the wrapping.
        whole = " ".join(t.get_text().replace("\n", " ") for t in titles)
        assert "cross_traffic.rate_bytes_per_cycle" in whole or "messaging.send_overhead_cycles" in whole


def test_bars_of_plain_run_results(runs):
    fig = plot.breakdown(runs)
    [ax] = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == list(runs["variant"])
    assert ax.get_title() == "em3d: time per processor by category (alewife, 8 procs)"
    fig = plot.volume(runs)
    assert [len(c) for c in fig.axes[0].containers] == [len(runs)] * 5
    # Two runs of one variant: the bars get told apart by more of the run's identity.
    twice = pd.concat([runs, runs.assign(machine="other")], ignore_index=True)
    names = [t.get_text() for t in plot.volume(twice).axes[0].get_xticklabels()]
    assert len(set(names)) == len(names) == 2 * len(runs)


def test_every_chart_saves_as_png(sweeps, runs, tmp_path):
    figures = {
        "runtime": plot.runtime(sweeps["grid"].df),
        "breakdown": plot.breakdown(sweeps["line"].df),
        "volume": plot.volume(runs),
    }
    for name, fig in figures.items():
        path = tmp_path / f"{name}.png"
        fig.savefig(path)
        assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), name
        assert path.stat().st_size > 10_000, name


def test_no_pyplot_and_the_users_backend_is_kept(sweeps, tmp_path):
    """Importing and drawing neither imports pyplot nor changes a backend the user chose."""
    script = f"""
import sys, importlib.util, matplotlib
matplotlib.use("svg")
spec = importlib.util.spec_from_file_location("p", {str(PLOT_PY)!r})
p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)
import pandas as pd
df = pd.DataFrame({{"variant": ["a", "a", "b", "b"], "vary.k": [1, 2, 1, 2], "cycles": [1, 3, 2, 2]}})
p.runtime(df).savefig({str(tmp_path / "x.png")!r})
assert "matplotlib.pyplot" not in sys.modules, "pyplot imported"
assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
"""
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")


def test_help_teaches_with_an_example():
    for f in [plot.runtime, plot.breakdown, plot.volume, plot.crossovers]:
        assert "Example" in f.__doc__ and "Args:" in f.__doc__ and "Returns:" in f.__doc__, f.__name__


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def _raises(match: str, f, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as e:
        f(*args, **kwargs)
    assert match in str(e.value), str(e.value)
    return str(e.value)


def test_bad_input_names_the_column(sweeps, runs):
    df = sweeps["line"].df
    for f in [plot.runtime, plot.breakdown, plot.volume, plot.crossovers]:
        _raises("no rows", f, df.iloc[0:0])
        _raises("`variant`", f, df.drop(columns=["variant"]))
    _raises("`cycles`", plot.runtime, df.drop(columns=["cycles"]))
    _raises("`cycles`", plot.crossovers, df.drop(columns=["cycles"]))
    _raises("`counters.nope`", plot.runtime, df, y="counters.nope")
    _raises("`nodes`", plot.runtime, df, x="nodes")
    _raises("`vary.*`", plot.runtime, runs)
    _raises("`breakdown.synchronization`", plot.breakdown, df.drop(columns=["breakdown.synchronization"]))
    _raises("`volume_bytes.data`", plot.volume, df.drop(columns=["volume_bytes.data"]))
    # Values: a non-numeric x or y, an x that is not one of the sweep's, a negative layer.
    text = df.assign(**{"vary.cross_traffic.rate_bytes_per_cycle": "fast"})
    _raises("`vary.cross_traffic.rate_bytes_per_cycle`", plot.runtime, text)
    _raises("`app`", plot.runtime, df, y="app")
    msg = _raises("at=3", plot.breakdown, df, at=3)
    assert "cross_traffic.rate_bytes_per_cycle" in msg and "x values: 0, 2, 4, 6, 8" in msg
    neg = df.assign(**{"volume_bytes.headers": -df["volume_bytes.headers"]})
    _raises("`volume_bytes.headers` is negative", plot.volume, neg)
    _raises("plain run results", plot.breakdown, runs, at=1)
    _raises("'nope'", plot.runtime, df, variants=["sm", "nope"])
    # Several panels do not fit one Axes; a log axis needs x > 0.
    _raises("`vary.remote`", plot.runtime, sweeps["grid"].df, ax=Figure().subplots())
    _raises("log x axis", plot.runtime, df, logx=True)
    with pytest.raises(TypeError):
        plot.runtime([{"variant": "sm"}])


def test_a_failed_point_is_skipped():
    df = _frame({"a": [(1, 1), (2, float("nan")), (3, 3)], "b": [(1, 2), (2, 2), (3, 2)]})
    line = next(x for x in plot.runtime(df).axes[0].get_lines() if x.get_label() == "a")
    assert list(line.get_xdata()) == [1.0, 3.0]
    c = plot.crossovers(df)
    assert list(c["x"]) == [2.0] and not math.isnan(c["y"][0])
