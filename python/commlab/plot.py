"""Charts of commlab results in matplotlib: the three charts ``commlab plot`` draws.

- :func:`runtime` -- a metric (``cycles`` by default) against a varied key, one line per
  variant, with the *crossovers* (where two variants change order) marked;
- :func:`breakdown` -- stacked bars of the mean time per processor in each time category
  (compute, memory & NI wait, message overhead, synchronization), one bar per variant;
- :func:`volume` -- stacked bars of the bytes injected into the network per traffic class
  (invalidates, requests, headers, data, cross-traffic), one bar per variant;
- :func:`crossovers` -- the crossovers themselves as a DataFrame, computed as the CLI
  computes those of ``summary.json`` (see ``crates/commlab-cli/src/crossover.rs``).

Input: a pandas DataFrame with one row per run, the flattened JSON objects of a sweep's
``results.jsonl`` (or of ``commlab run --json``), as ``pandas.json_normalize`` makes them::

    import json, pandas as pd
    with open("sweep-em3d/results.jsonl") as f:
        df = pd.json_normalize([json.loads(line) for line in f if line.strip()])
    # (commlab.read_results("sweep-em3d/results.jsonl") builds this frame too)
    # columns: app, variant, cycles, machine, procs, point, breakdown.compute, ...,
    #          volume_bytes.data, ..., counters.*, params.*, vary.<key>, ...

Output: each chart function returns a :class:`matplotlib.figure.Figure`. Figures are made
without :mod:`matplotlib.pyplot`, so importing or using this module never selects or switches
a backend: save with ``fig.savefig("runtime.png")`` (any format matplotlib writes), or in
Jupyter just leave the figure as a cell's value. To draw into a figure of your own (or one
``pyplot`` shows), pass ``ax=``.

Which runs are drawn, as in ``commlab plot``:

- *Variant order*: ``variants=[...]`` if given (which also restricts the chart to them); else
  the categories' order if the ``variant`` column is categorical; else the order in which the
  variants first appear in the frame. (A sweep run with ``--jobs`` > 1 writes runs as they
  finish; :func:`commlab.read_results` and :func:`commlab.runs_to_frame` make ``variant`` a
  categorical in the application's own order, so their frames need no ``variants=``.)
- *x axis*: the ``x=`` column (``"vary.nodes"`` or just ``"nodes"``); by default the sweep's
  first ``--vary`` key, i.e. the one ``summary.json`` uses. ``results.jsonl`` writes the
  ``vary`` keys sorted by name, so the DataFrame's column order does not say which key came
  first; it is recovered from the ``point`` numbering (the first ``--vary`` is the outermost
  loop of the grid). Without a ``point`` column it is the first ``vary.*`` column that takes
  more than one value.
- *Other varied keys*: each combination of their values is one panel (one Axes) of the
  figure, as the CLI draws one chart per combination.
- *Duplicates*: of several rows with the same variant and x in one panel, the first counts.
- Non-finite values of the metric (a failed point) are skipped.

Bad input (an empty frame, a missing column, a non-numeric x, an ``at=`` that is not an x
value of the sweep) raises :class:`ValueError` naming the column or value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

__all__ = [
    "CATEGORIES",
    "TRAFFIC_CLASSES",
    "breakdown",
    "crossovers",
    "runtime",
    "volume",
]

#: Time categories, bottom of the stack first: (column suffix in ``breakdown.*``, legend label).
#: The order and labels of ``commlab_api::Category::ALL``.
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("compute", "compute"),
    ("memory_ni_wait", "memory & NI wait"),
    ("message_overhead", "message overhead"),
    ("synchronization", "synchronization"),
)

#: Traffic classes, bottom of the stack first: (column suffix in ``volume_bytes.*``, legend
#: label). The order and labels of ``commlab_api::TrafficClass::ALL``.
TRAFFIC_CLASSES: tuple[tuple[str, str], ...] = (
    ("invalidates", "invalidates"),
    ("requests", "requests"),
    ("headers", "headers"),
    ("data", "data"),
    ("cross_traffic", "cross-traffic"),
)

# The CLI's palette ("Tableau 10"), in series order; series beyond ten reuse it with another
# point shape.
_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_SHAPES = ("o", "s", "^", "D", "v", "P", "X")
_INK = "#282828"
_MARKER_INK = "#5a5a5a"
_RUNTIME_Y_LABEL = "runtime (processor cycles)"
_PANEL_SIZE = (7.0, 4.5)  # inches per panel


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------


def crossovers(
    df: pd.DataFrame,
    x: str | None = None,
    y: str = "cycles",
    *,
    variants: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Where two variants change order along ``x``: one row per crossover.

    For each combination of the other varied keys and each pair of variants (``variant_a``
    listed before ``variant_b`` in the variant order), the difference ``y_a - y_b`` is taken
    at the x values both variants have; a crossover is a change of its sign:

    - between two samples of opposite sign: the x where the straight lines between them meet
      (linear interpolation in x, also on a log axis), ``y`` the interpolated value there;
    - across a run of samples where the two are exactly equal, with opposite signs before and
      after it: one crossover in the middle of the run;
    - touching (equal, same order on both sides), ties at either end and identical curves
      are not crossovers; non-finite samples are skipped.

    These are the rules of the CLI (``crossover.rs``), so for a sweep's ``results.jsonl`` the
    rows equal the ``crossovers`` of its ``summary.json``.

    Args:
        df: one row per run (see the module's help).
        x: the x column, e.g. ``"vary.messaging.send_overhead_cycles"`` (the ``vary.`` prefix
            may be left out); default: the sweep's first ``--vary`` key.
        y: the metric compared, default ``"cycles"``.
        variants: the variants compared, in this order (default: see the module's help).

    Returns:
        A DataFrame with one column per other varied key (``vary.*``, the combination the
        crossover belongs to), then ``variant_a``, ``variant_b``, ``x``, ``y``; ordered by
        combination, then pair, then x. ``result.attrs`` holds ``"x"`` and ``"y"``, the
        columns used.

    Example (a sweep of ``commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:5``)::

        from commlab.plot import crossovers
        crossovers(df)
        #   variant_a variant_b         x             y
        # 0     sm-pf    mp-int  6.052761  50732.791583
        # 1     sm-pf      bulk  6.145697  52537.119810
        # ...
        crossovers(grid, x="remote", variants=["sm", "bulk"])   # along another varied key
    """
    data = _runtime_data(df, x, y, variants, "crossovers")
    rows: list[dict[str, Any]] = []
    for fixed, curves in data.panels:
        for a, b, cx, cy in _all_crossovers(curves):
            row = {col: val for col, val in fixed}
            row.update(variant_a=a, variant_b=b, x=cx, y=cy)
            rows.append(row)
    columns = [*data.fixed_columns, "variant_a", "variant_b", "x", "y"]
    out = pd.DataFrame(rows, columns=columns)
    out["x"] = out["x"].astype(float)
    out["y"] = out["y"].astype(float)
    out.attrs["x"] = data.x
    out.attrs["y"] = y
    return out


def runtime(
    df: pd.DataFrame,
    x: str | None = None,
    y: str = "cycles",
    ax: Axes | None = None,
    *,
    variants: Sequence[str] | None = None,
    logx: bool | None = None,
    marks: Mapping[str, float] | None = None,
    title: str | None = None,
    xlabel: str | None = None,
) -> Figure:
    """Runtime curves: ``y`` against ``x``, one line per variant, crossovers marked.

    Each variant is one line through its samples (with a point at each); each crossover
    (see :func:`crossovers`) is an ``x`` mark labelled ``a/b``. The lines join the measured
    points straight, nothing drawn between them; on a log x axis a mark sits where the drawn
    lines cross, the same fraction of the way along the segment as the crossover's x (which
    is interpolated linearly), as ``commlab plot runtime`` draws them.

    Other varied keys: one panel per combination of their values (panels titled
    ``key=value``, each with its own y range and legend). To draw one combination only,
    select its rows first, e.g. ``df[df["vary.remote"] == 0.5]``.

    Args:
        df: one row per run of a sweep (see the module's help).
        x: the x column (the ``vary.`` prefix may be left out); default: the sweep's first
            ``--vary`` key.
        y: the metric on the y axis, default ``"cycles"``; any numeric column works, e.g.
            ``"counters.cycles_per_iteration"``.
        ax: draw into this Axes (of your own figure) instead of a new figure; only when the
            chart has a single panel. The figure returned is then ``ax.figure``.
        variants: the variants drawn, in this order (default: see the module's help).
        logx: log x axis; default (``None``) as the CLI: log when every x is positive and the
            values are spaced geometrically over a factor of 20 or more.
        marks: labelled vertical dashed lines, e.g. ``{"alewife": 18}`` (``--mark``).
        title: the title (of the figure when there are several panels); default like the
            CLI's, e.g. ``"em3d: runtime vs remote (alewife, 8 procs)"``.
        xlabel: the x axis label; default the key without ``vary.``.

    Returns:
        The figure. Its crossovers are :func:`crossovers` of the same arguments; each
        panel's marks are its Line2D labelled ``"crossover"``.

    Raises:
        ValueError: no rows, a missing column (named), a non-numeric x or y, ``ax`` given for
            several panels, a log axis with an x <= 0.

    Example::

        import json, pandas as pd
        from commlab import plot
        with open("sweep-em3d/results.jsonl") as f:
            df = pd.json_normalize([json.loads(line) for line in f])
        fig = plot.runtime(df)            # cycles vs the swept key, one line per variant
        fig.savefig("runtime.png")
        plot.crossovers(df)               # the crossovers it marks, as a DataFrame

        # Into axes of your own, two variants only, log x, a marker at x = 18:
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        plot.runtime(df, ax=ax, variants=["sm", "bulk"], logx=True, marks={"alewife": 18})
    """
    what = "runtime"
    data = _runtime_data(df, x, y, variants, what)
    key = _short_key(data.x)
    xs_all = [px for _, curves in data.panels for _, pts in curves for px, _ in pts]
    log = _auto_log(xs_all) if logx is None else bool(logx)
    mark_list = [(str(k), float(v)) for k, v in (marks or {}).items()]
    for label, mx in mark_list:
        if not math.isfinite(mx):
            raise ValueError(f"{what}: mark `{label}` is at x = {mx} (a mark needs a finite x)")
    if log:
        for _, curves in data.panels:
            for name, pts in curves:
                bad = next((px for px, _ in pts if px <= 0), None)
                if bad is not None:
                    raise ValueError(
                        f"{what}: log x axis, but variant `{name}` has {data.x} = {_short_number(bad)} "
                        "(log needs x > 0; pass logx=False)"
                    )
        for label, mx in mark_list:
            if mx <= 0:
                raise ValueError(f"{what}: log x axis, but mark `{label}` is at x = {_short_number(mx)}")

    app, ctx = _context(data.frame, [])
    fig, axes = _figure_and_axes(ax, len(data.panels), what, data.fixed_columns)
    several = len(data.panels) > 1
    for axis, (fixed, curves) in zip(axes, data.panels):
        found = _all_crossovers(curves)
        if log:
            # Marks where the straight segments drawn on the log axis cross (the computed x,
            # interpolated linearly, is elsewhere on a log axis); the crossovers themselves
            # (`crossovers`) are unchanged.
            measured = sorted({px for _, pts in curves for px, _ in pts})
            found = [(a, b, _drawn_x(cx, measured), cy) for a, b, cx, cy in found]
        for k, (name, pts) in enumerate(curves):
            colour, shape = _PALETTE[k % len(_PALETTE)], _SHAPES[(k // len(_PALETTE)) % len(_SHAPES)]
            if not pts:
                axis.plot([], [], color=colour, marker=shape, linewidth=2, label=f"{name} (no data)")
                continue
            # The measured points joined by straight segments, nothing interpolated between them.
            axis.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                color=colour,
                linewidth=2,
                marker=shape,
                markersize=5,
                label=name,
            )
        if log:
            axis.set_xscale("log")
        ys = [py for _, pts in curves for _, py in pts] + [c[3] for c in found]
        if ys:
            axis.set_ylim(*_y_range(min(ys), max(ys)))
        axis.margins(x=0.03)
        if found:
            axis.plot(
                [c[2] for c in found],
                [c[3] for c in found],
                linestyle="none",
                marker="x",
                markersize=9,
                markeredgewidth=2,
                color=_INK,
                label="crossover",
                zorder=5,
            )
            _label_crossovers(axis, found)
        for j, (label, mx) in enumerate(mark_list):
            axis.axvline(mx, color=_MARKER_INK, linestyle=(0, (6, 4)), linewidth=1, label="marker" if j == 0 else None)
            axis.annotate(
                label,
                (mx, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -12 - 11 * (j % 3)),
                textcoords="offset points",
                fontsize=8,
                color=_MARKER_INK,
            )
        axis.set_xlabel(xlabel if xlabel is not None else key)
        axis.set_ylabel(_RUNTIME_Y_LABEL if y == "cycles" else y)
        axis.yaxis.set_major_formatter(_tick_formatter(axis))
        axis.grid(True, color="#e1e1e1")
        axis.set_axisbelow(True)
        _legend(axis, own=ax is None)
        desc = _fixed_desc(fixed)
        if several:
            axis.set_title(", ".join(desc), fontsize=11)
        else:
            _, panel_ctx = _context(data.frame, desc)
            axis.set_title(title if title is not None else f"{app}: runtime vs {key}{panel_ctx}")
    if several:
        fig.suptitle(title if title is not None else f"{app}: runtime vs {key}{ctx}")
    return fig


def breakdown(
    df: pd.DataFrame,
    at: float | None = None,
    x: str | None = None,
    ax: Axes | None = None,
    *,
    variants: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Time breakdown: stacked bars of the mean time per processor by category, one bar per variant.

    The layers, bottom first, are the ``breakdown.*`` columns ``compute``,
    ``memory_ni_wait``, ``message_overhead`` and ``synchronization`` (see
    :data:`CATEGORIES`); each bar's total (the mean busy time per processor) is written on
    top. For a sweep, the bars are the runs at one x: ``at=`` (default: the smallest x),
    one panel per combination of the other varied keys. For plain ``commlab run --json``
    results (no ``vary.*`` columns), every row is a bar.

    Args:
        df: one row per run (see the module's help).
        at: the x value whose runs are drawn (a sweep only); default the smallest.
        x: the x column (the ``vary.`` prefix may be left out); default: the sweep's first
            ``--vary`` key.
        ax: draw into this Axes instead of a new figure (a single panel only).
        variants: the variants drawn, in this order (default: see the module's help).
        title: the title (of the figure when there are several panels).

    Returns:
        The figure: per panel, one bar container per category (the legend lists them top
        layer first), each with one bar per variant, labelled by variant on the x axis.

    Raises:
        ValueError: no rows, a missing ``breakdown.*`` or ``variant`` column (named), a
            negative value, ``at`` not an x of the sweep, ``at``/``x`` with plain results.

    Example::

        from commlab import plot
        fig = plot.breakdown(df)                # the runs at the smallest x
        fig = plot.breakdown(df, at=100)        # the runs at x = 100
        fig.savefig("breakdown.png")
    """
    return _stacked(
        df,
        "breakdown",
        "breakdown.",
        CATEGORIES,
        "time per processor by category",
        "mean time per processor (processor cycles)",
        at,
        x,
        ax,
        variants,
        title,
    )


def volume(
    df: pd.DataFrame,
    at: float | None = None,
    x: str | None = None,
    ax: Axes | None = None,
    *,
    variants: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Traffic volume: stacked bars of the bytes injected per traffic class, one bar per variant.

    The layers, bottom first, are the ``volume_bytes.*`` columns ``invalidates``,
    ``requests``, ``headers``, ``data`` and ``cross_traffic`` (see :data:`TRAFFIC_CLASSES`);
    each bar's total is written on top. Which runs are drawn is as for :func:`breakdown`.

    Args:
        df: one row per run (see the module's help).
        at: the x value whose runs are drawn (a sweep only); default the smallest.
        x: the x column (the ``vary.`` prefix may be left out); default: the sweep's first
            ``--vary`` key.
        ax: draw into this Axes instead of a new figure (a single panel only).
        variants: the variants drawn, in this order (default: see the module's help).
        title: the title (of the figure when there are several panels).

    Returns:
        The figure: per panel, one bar container per traffic class, each with one bar per
        variant.

    Raises:
        ValueError: as :func:`breakdown`, for the ``volume_bytes.*`` columns.

    Example::

        from commlab import plot
        fig = plot.volume(df, at=8.0)
        fig.savefig("volume.svg")
    """
    return _stacked(
        df,
        "volume",
        "volume_bytes.",
        TRAFFIC_CLASSES,
        "network traffic by class",
        "traffic volume (bytes)",
        at,
        x,
        ax,
        variants,
        title,
    )


# ---------------------------------------------------------------------------------------------
# Crossovers: a port of crates/commlab-cli/src/crossover.rs
# ---------------------------------------------------------------------------------------------

Curve = list[tuple[float, float]]


def _all_crossovers(curves: Sequence[tuple[str, Curve]]) -> list[tuple[str, str, float, float]]:
    """Every crossover of every pair of curves, pairs in input order, each pair's by x."""
    out = []
    for i, (na, ca) in enumerate(curves):
        for nb, cb in curves[i + 1 :]:
            for cx, cy in _pair_crossovers(ca, cb):
                out.append((na, nb, cx, cy))
    return out


def _pair_crossovers(a: Curve, b: Curve) -> list[tuple[float, float]]:
    """Crossovers of two curves, as (x, y); the same arithmetic as the CLI's."""
    pts: list[tuple[float, float, float]] = []
    for xa, ya in a:
        if not (math.isfinite(xa) and math.isfinite(ya)):
            continue
        yb = next((yb for xb, yb in b if xb == xa and math.isfinite(yb)), None)
        if yb is not None:
            pts.append((xa, ya, yb))
    pts.sort(key=lambda p: p[0])
    dedup: list[tuple[float, float, float]] = []
    for p in pts:
        if not dedup or dedup[-1][0] != p[0]:
            dedup.append(p)
    pts = dedup

    out: list[tuple[float, float]] = []
    last: tuple[int, float] | None = None  # the last sample with a non-zero difference
    for i, (_, ya, yb) in enumerate(pts):
        d = ya - yb
        if d == 0.0:
            continue
        sign = math.copysign(1.0, d)
        if last is not None and last[1] != sign:
            j = last[0]
            if j + 1 == i:
                # Adjacent samples of opposite sign: interpolate the difference to zero.
                x0, a0, b0 = pts[j]
                x1, a1, _ = pts[i]
                d0 = a0 - b0
                t = d0 / (d0 - d)
                out.append((x0 + t * (x1 - x0), a0 + t * (a1 - a0)))
            else:
                # Equal on samples j+1 ..= i-1: one crossover in the middle of the tie.
                tie = pts[j + 1 : i]
                mid = (tie[0][0] + tie[-1][0]) / 2.0
                out.append((mid, _interpolate(tie, mid)))
        last = (i, sign)
    return out


def _interpolate(tie: Sequence[tuple[float, float, float]], x: float) -> float:
    """The piecewise-linear value at ``x`` of the tied samples' y."""
    for (x0, y0, _), (x1, y1, _) in zip(tie, tie[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (x - x0) / (x1 - x0) * (y1 - y0)
    return tie[0][1]


# ---------------------------------------------------------------------------------------------
# Selecting the data
# ---------------------------------------------------------------------------------------------


class _RuntimeData:
    """A sweep split for a runtime chart: per panel, its fixed keys and one curve per variant."""

    def __init__(
        self,
        frame: pd.DataFrame,
        x: str,
        fixed_columns: list[str],
        panels: list[tuple[list[tuple[str, Any]], list[tuple[str, Curve]]]],
    ):
        self.frame = frame
        self.x = x
        self.fixed_columns = fixed_columns
        self.panels = panels


def _runtime_data(df: pd.DataFrame, x: str | None, y: str, variants: Sequence[str] | None, what: str) -> _RuntimeData:
    _check_frame(df, what)
    _require(df, ["variant", y], what)
    frame = _select_variants(df, variants, what)
    order = _variant_order(frame, variants)
    xcol = _x_column(frame, x, what)
    xs = _numeric_x(frame, xcol, what)
    ys = pd.to_numeric(frame[y], errors="coerce")
    bad = frame[y][ys.isna() & frame[y].notna()]
    if len(bad):
        raise ValueError(f"{what}: column `{y}` is not numeric (e.g. {bad.iloc[0]!r})")
    frame = frame.assign(_x=xs.to_numpy(), _y=ys.astype(float).to_numpy())
    fixed_columns = [c for c in _vary_columns(frame) if c != xcol]
    panels = []
    for fixed, rows in _panels(frame, fixed_columns):
        curves: list[tuple[str, Curve]] = []
        for v in order:
            sub = rows[rows["variant"] == v].drop_duplicates("_x", keep="first")
            pts = sorted(
                ((float(px), float(py)) for px, py in zip(sub["_x"], sub["_y"]) if math.isfinite(py)),
                key=lambda p: p[0],
            )
            curves.append((v, pts))
        panels.append((fixed, curves))
    return _RuntimeData(frame, xcol, fixed_columns, panels)


def _stacked(
    df: pd.DataFrame,
    what: str,
    prefix: str,
    layers: Sequence[tuple[str, str]],
    title_what: str,
    y_label: str,
    at: float | None,
    x: str | None,
    ax: Axes | None,
    variants: Sequence[str] | None,
    title: str | None,
) -> Figure:
    _check_frame(df, what)
    columns = [prefix + name for name, _ in layers]
    _require(df, ["variant", *columns], what)
    for col in columns:
        values = pd.to_numeric(df[col], errors="coerce")
        bad = df[col][values.isna() & df[col].notna()]
        if len(bad):
            raise ValueError(f"{what}: column `{col}` is not numeric (e.g. {bad.iloc[0]!r})")
        negative = values[values < 0]
        if len(negative):
            row = negative.index[0]
            raise ValueError(
                f"{what}: column `{col}` is negative ({_short_number(float(negative.iloc[0]))}) "
                f"in row {row!r} (variant {df.at[row, 'variant']!r})"
            )
    frame = _select_variants(df, variants, what)
    order = _variant_order(frame, variants)
    vary = _vary_columns(frame)
    swept = frame[vary].notna().any(axis=1) if vary else pd.Series(False, index=frame.index)
    # Per chart: (fixed keys, rows drawn, extra title parts).
    charts: list[tuple[list[tuple[str, Any]], pd.DataFrame, list[str]]] = []
    fixed_columns: list[str] = []
    if not swept.any():
        if x is not None or at is not None:
            raise ValueError(
                f"{what}: x= and at= pick a point of a sweep, but the frame holds plain run results "
                "(no `vary.*` values)"
            )
        charts.append(([], frame, []))
    else:
        if not swept.all():
            row = swept.index[~swept.to_numpy()][0]
            raise ValueError(
                f"{what}: row {row!r} has no `vary.*` value, but other rows have: mixed sweep and run results"
            )
        xcol = _x_column(frame, x, what)
        frame = frame.assign(_x=_numeric_x(frame, xcol, what).to_numpy())
        fixed_columns = [c for c in vary if c != xcol]
        for fixed, rows in _panels(frame, fixed_columns):
            xs = sorted(set(rows["_x"]))
            if at is None:
                here = xs[0]
            else:
                a = float(at)
                here = next((v for v in xs if abs(v - a) <= 1e-9 * max(abs(a), 1e-300)), None)
                if here is None:
                    where = f" for {' '.join(_fixed_desc(fixed))}" if fixed else ""
                    have = ", ".join(_short_number(v) for v in xs)
                    raise ValueError(
                        f"{what}: at={_short_number(a)}: no runs at {xcol}={_short_number(a)}{where} (x values: {have})"
                    )
            chosen = rows[rows["_x"] == here].drop_duplicates("variant", keep="first")
            charts.append((fixed, chosen, [*_fixed_desc(fixed), f"{_short_key(xcol)}={_short_number(here)}"]))

    fig, axes = _figure_and_axes(ax, len(charts), what, fixed_columns)
    several = len(charts) > 1
    for axis, (fixed, rows, extra) in zip(axes, charts):
        rank = {v: i for i, v in enumerate(order)}
        rows = rows.iloc[sorted(range(len(rows)), key=lambda i: rank[rows["variant"].iloc[i]])]
        names = _bar_names(rows)
        layer_values = [pd.to_numeric(rows[c], errors="coerce").astype(float).to_numpy() for c in columns]
        if not any(math.isfinite(v) for vals in layer_values for v in vals):
            raise ValueError(f"{what}: no finite values in any of the columns {', '.join(columns)}")
        positions = list(range(len(names)))
        base = [0.0] * len(names)
        for layer, ((_, label), vals) in enumerate(zip(layers, layer_values)):
            heights = [float(v) if math.isfinite(v) and v > 0 else 0.0 for v in vals]
            axis.bar(
                positions,
                heights,
                width=0.68,
                bottom=base,
                color=_PALETTE[layer % len(_PALETTE)],
                label=label,
            )
            base = [b + h for b, h in zip(base, heights)]
        top = max(base) if base else 0.0
        for p, total in zip(positions, base):
            axis.annotate(
                _short_number(total),
                (p, total),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=9,
                color=_INK,
            )
        axis.set_xticks(positions)
        axis.set_xticklabels(names)
        axis.set_xlim(-0.5, len(names) - 0.5)
        axis.set_ylim(0.0, top * 1.12 if top > 0 else 1.0)
        axis.set_xlabel("variant")
        axis.set_ylabel(y_label)
        axis.yaxis.set_major_formatter(_tick_formatter(axis))
        axis.grid(True, axis="y", color="#e1e1e1")
        axis.set_axisbelow(True)
        # Legend top-down as the layers stack: top layer first.
        handles, labels = axis.get_legend_handles_labels()
        _legend(axis, own=ax is None, handles=handles[::-1], labels=labels[::-1])
        app, ctx = _context(rows, extra)
        if several:
            axis.set_title(", ".join(extra), fontsize=11)
        else:
            text = title if title is not None else f"{app}: {title_what}{ctx}"
            axis.set_title(_wrap_title(text, fig, share=0.8, fontsize=12.0))
    if several:
        app, ctx = _context(frame, [])
        text = title if title is not None else f"{app}: {title_what}{ctx}"
        fig.suptitle(_wrap_title(text, fig, share=0.92, fontsize=12.0))
    return fig


def _check_frame(df: Any, what: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(
            f"{what}: expected a pandas DataFrame of runs (e.g. pandas.json_normalize of results.jsonl), "
            f"got {type(df).__name__}"
        )
    if len(df) == 0:
        raise ValueError(f"{what}: the DataFrame has no rows (no runs to plot)")


def _require(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        have = [str(c) for c in df.columns]
        shown = ", ".join(have[:12]) + (", ..." if len(have) > 12 else "")
        names = ", ".join(f"`{c}`" for c in missing)
        raise ValueError(
            f"{what}: no column {names} in the DataFrame (columns: {shown}); "
            "expected one row per run as pandas.json_normalize makes them from results.jsonl"
        )


def _vary_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if isinstance(c, str) and c.startswith("vary.")]


def _short_key(column: str) -> str:
    return column.removeprefix("vary.")


def _x_column(df: pd.DataFrame, x: str | None, what: str) -> str:
    """The x column: ``x`` (with or without ``vary.``), else the sweep's first ``--vary`` key."""
    vary = _vary_columns(df)
    if x is not None:
        if x in df.columns:
            return x
        if "vary." + x in df.columns:
            return "vary." + x
        listed = ", ".join(vary) if vary else "none"
        raise ValueError(f"{what}: no column `{x}` (nor `vary.{x}`) for the x axis (varied columns: {listed})")
    if not vary:
        raise ValueError(
            f"{what}: no `vary.*` column for the x axis: give x= (a numeric column), or use the "
            "results.jsonl of `commlab sweep`"
        )
    varied = [c for c in vary if df[c].nunique(dropna=True) > 1]
    candidates = varied or vary
    if len(candidates) > 1 and "point" in df.columns:
        return _outermost(df, candidates)
    return candidates[0]


def _outermost(df: pd.DataFrame, columns: list[str]) -> str:
    """Of ``columns``, the one whose value changes least often along the ``point`` numbering:
    the outermost loop of the sweep's grid, i.e. its first ``--vary`` key (ties: the first)."""
    points = pd.to_numeric(df["point"], errors="coerce")
    if points.isna().any():
        return columns[0]
    sub = df.assign(_point=points).drop_duplicates("_point").sort_values("_point", kind="stable")

    def changes(col: str) -> int:
        vals = [None if pd.isna(v) else v for v in sub[col]]
        return sum(1 for p, q in zip(vals, vals[1:]) if p != q)

    return min(columns, key=lambda c: (changes(c), columns.index(c)))


def _numeric_x(df: pd.DataFrame, xcol: str, what: str) -> pd.Series:
    raw = df[xcol]
    xs = pd.to_numeric(raw, errors="coerce").astype(float)
    bad = [(i, v) for i, v, n in zip(df.index, raw, xs) if not math.isfinite(n)]
    if bad:
        i, v = bad[0]
        raise ValueError(
            f"{what}: the x column `{xcol}` needs finite numbers, but row {i!r} has {v!r} (pick another with x=)"
        )
    return xs


def _select_variants(df: pd.DataFrame, variants: Sequence[str] | None, what: str) -> pd.DataFrame:
    if variants is None:
        return df
    if isinstance(variants, str):
        variants = [variants]
    present = set(df["variant"].astype(str))
    missing = [v for v in variants if v not in present]
    if missing:
        raise ValueError(
            f"{what}: variant {', '.join(repr(v) for v in missing)} has no rows in column `variant` "
            f"(present: {', '.join(sorted(present))})"
        )
    return df[df["variant"].astype(str).isin(list(variants))]


def _variant_order(df: pd.DataFrame, variants: Sequence[str] | None) -> list[str]:
    if variants is not None:
        return [variants] if isinstance(variants, str) else list(dict.fromkeys(variants))
    col = df["variant"]
    present = list(dict.fromkeys(col.dropna()))
    if isinstance(col.dtype, pd.CategoricalDtype):
        return [c for c in col.cat.categories if c in set(present)]
    return present


def _sort_key(v: Any) -> tuple:
    """JSON values ordered as the CLI orders them: numbers by value, anything else by its text."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return (2, "")
    if isinstance(v, bool):
        return (1, str(v).lower())
    if isinstance(v, (int, float)):
        return (0, float(v))
    return (1, str(v))


def _panels(frame: pd.DataFrame, fixed_columns: list[str]) -> list[tuple[list[tuple[str, Any]], pd.DataFrame]]:
    """The rows of each combination of ``fixed_columns``' values, ordered by those values."""
    if not fixed_columns:
        return [([], frame)]
    combos: dict[tuple, list[int]] = {}
    for pos, vals in enumerate(zip(*(frame[c] for c in fixed_columns))):
        norm = tuple(None if _is_missing(v) else v for v in vals)
        combos.setdefault(norm, []).append(pos)
    ordered = sorted(combos, key=lambda combo: [_sort_key(v) for v in combo])
    return [(list(zip(fixed_columns, combo)), frame.iloc[combos[combo]]) for combo in ordered]


def _is_missing(v: Any) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _fixed_desc(fixed: Sequence[tuple[str, Any]]) -> list[str]:
    return [f"{_short_key(k)}={_show(v)}" for k, v in fixed]


def _show(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, (int, float)):
        return _short_number(float(v))
    return str(v)


def _common(df: pd.DataFrame, column: str) -> Any:
    if column not in df.columns:
        return None
    vals = list(dict.fromkeys(df[column]))
    if len(vals) != 1 or _is_missing(vals[0]) or vals[0] == "":
        return None
    return vals[0]


def _context(df: pd.DataFrame, extra: Sequence[str]) -> tuple[str, str]:
    """The app and " (machine, N procs, extra...)" for titles, from the values all rows share."""
    app = _common(df, "app")
    parts = []
    machine = _common(df, "machine")
    if machine is not None:
        parts.append(str(machine))
    procs = _common(df, "procs")
    if procs is not None and float(procs) > 0:
        parts.append(f"{_short_number(float(procs))} procs")
    parts.extend(extra)
    return (str(app) if app is not None else "results", f" ({', '.join(parts)})" if parts else "")


def _bar_names(rows: pd.DataFrame) -> list[str]:
    """Bar names: the variant, with more of the run's identity where needed to tell bars apart."""

    def col(name: str) -> list[str]:
        return [str(v) for v in rows[name]] if name in rows.columns else [""] * len(rows)

    variant, app, machine = col("variant"), col("app"), col("machine")
    procs = [_show(v) for v in rows["procs"]] if "procs" in rows.columns else [""] * len(rows)
    steps: list[Callable[[int], str]] = [
        lambda i: variant[i],
        lambda i: f"{app[i]} {variant[i]}",
        lambda i: f"{app[i]} {variant[i]} @{machine[i]}",
        lambda i: f"{app[i]} {variant[i]} @{machine[i]} {procs[i]}p",
        lambda i: f"{variant[i]} #{rows.index[i]}",
    ]
    for step in steps:
        names = [step(i) for i in range(len(rows))]
        if len(set(names)) == len(names):
            break
    return names


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


def _figure_and_axes(ax: Axes | None, n: int, what: str, fixed_columns: list[str]) -> tuple[Figure, list[Axes]]:
    if ax is not None:
        if n > 1:
            cols = ", ".join(f"`{c}`" for c in fixed_columns)
            raise ValueError(
                f"{what}: {n} combinations of the other varied columns ({cols}) make {n} panels, "
                f"but ax= holds one: select one combination's rows first, e.g. "
                f"df[df[{fixed_columns[0]!r}] == value], or leave ax=None for a figure of panels"
            )
        fig: Any = ax.get_figure()
        while fig is not None and not isinstance(fig, Figure):  # a SubFigure: its root figure
            fig = getattr(fig, "figure", None)
        if fig is None:
            raise ValueError(f"{what}: ax= belongs to no figure")
        return fig, [ax]
    ncols = min(n, 2)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(_PANEL_SIZE[0] * ncols, _PANEL_SIZE[1] * nrows), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False)
    axes = [a for row in grid for a in row]
    for spare in axes[n:]:
        spare.remove()
    return fig, axes[:n]


def _legend(axis: Axes, own: bool, handles: list[Any] | None = None, labels: list[str] | None = None) -> None:
    kwargs: dict[str, Any] = {"fontsize": 9, "title": "legend", "title_fontsize": 9}
    if own:
        kwargs.update(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        kwargs.update(loc="best")
    if handles is not None and labels is not None:
        axis.legend(handles, labels, **kwargs)
    else:
        axis.legend(**kwargs)


def _label_crossovers(axis: Axes, found: Sequence[tuple[str, str, float, float]]) -> None:
    """Label each crossover mark "a/b" in the first free place of a ladder around it (right or
    left, above or below, then one label height further each step) that covers neither a mark
    nor a label placed before it, as the CLI places them; a leader line joins a label placed
    away from its mark. Positions are estimated in points from the axes' current size."""
    axis.get_xlim(), axis.get_ylim()  # apply any pending autoscaling before transforming
    size = 8.0
    to_points = 72.0 / axis.figure.dpi
    marks = [tuple(p * to_points for p in axis.transData.transform((cx, cy))) for _, _, cx, cy in found]
    labels = [f"{a}/{b}" for a, b, _, _ in found]
    sizes = [(0.6 * size * len(text) + 2.0, 1.35 * size) for text in labels]
    taken: list[tuple[float, float, float, float]] = []
    mark_boxes = [(mx - 6.0, my - 6.0, mx + 6.0, my + 6.0) for mx, my in marks]

    def overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    for (mx, my), (w, h), text, (_, _, cx, cy) in zip(marks, sizes, labels, found):
        rungs = 4 * len(marks) + 4
        ladder = [
            offset
            for k in range(rungs + 1)
            for offset in (
                (6.0, 7.0 + k * h),
                (6.0, -7.0 - h - k * h),
                (-6.0 - w, 7.0 + k * h),
                (-6.0 - w, -7.0 - h - k * h),
            )
        ]
        chosen = ladder[-4]
        for dx, dy in ladder:
            rect = (mx + dx, my + dy, mx + dx + w, my + dy + h)
            if not any(overlaps(rect, t) for t in taken + mark_boxes):
                chosen = (dx, dy)
                break
        dx, dy = chosen
        taken.append((mx + dx, my + dy, mx + dx + w, my + dy + h))
        far = abs(dy) > 7.0 + h + 1.0
        axis.annotate(
            text,
            (cx, cy),
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left",
            va="bottom",
            fontsize=size,
            color=_INK,
            bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "alpha": 0.85, "linewidth": 0},
            arrowprops={"arrowstyle": "-", "color": _INK, "alpha": 0.6, "linewidth": 0.8} if far else None,
            annotation_clip=False,
        )


def _drawn_x(x: float, measured: Sequence[float]) -> float:
    """Where a crossover at `x` (interpolated linearly between measured x0 and x1) sits on a log
    x axis, where curves are drawn straight between measured points: the same fraction of the
    way from x0 to x1 on the screen, x0 * (x1 / x0) ** t (as the CLI draws it)."""
    below = [m for m in measured if m <= x]
    above = [m for m in measured if m >= x]
    if not below or not above or above[0] <= below[-1]:
        return x
    x0, x1 = below[-1], above[0]
    return float(x0 * (x1 / x0) ** ((x - x0) / (x1 - x0)))


def _auto_log(xs: Iterable[float]) -> bool:
    """Log x when every x is positive and the values are spread geometrically over a factor of
    20 or more (their log-spacing more even than their linear spacing), as the CLI decides."""
    v = sorted({x for x in xs if math.isfinite(x)})
    if len(v) < 2 or v[0] <= 0 or v[-1] / v[0] < 20.0:
        return False
    if len(v) == 2:
        return v[1] / v[0] >= 100.0

    def spread(d: list[float]) -> float:
        mean = sum(d) / len(d)
        return math.sqrt(sum((e - mean) ** 2 for e in d) / len(d)) / mean

    lin = spread([b - a for a, b in zip(v, v[1:])])
    log = spread([math.log(b / a) for a, b in zip(v, v[1:])])
    return log < lin


def _y_range(lo: float, hi: float) -> tuple[float, float]:
    """From 0 when all values are non-negative, unless they span less than a tenth of the
    largest (then zoomed to them with a margin); never empty. The CLI's rule."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return (0.0, 1.0)
    if lo >= 0.0 and (hi - lo) >= 0.1 * hi:
        lo = 0.0
    if hi == lo:
        d = 1.0 if hi == 0.0 else abs(hi) * 0.1
        lo = 0.0 if lo >= 0.0 and lo - d < 0.0 else lo - d
        hi += d
    pad = (hi - lo) * 0.08
    return (0.0 if lo == 0.0 else lo - pad, hi + pad)


def _wrap_title(text: str, fig: Figure, share: float, fontsize: float) -> str:
    """`text` broken at spaces into lines no wider than `share` of the figure's width at
    `fontsize` points (measured with the font matplotlib draws it in): a long title (a sweep's
    point, machine and processors) was clipped at both edges of the default-size figure."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    prop = FontProperties(size=fontsize)
    room = fig.get_figwidth() * 72.0 * share

    def width(line: str) -> float:
        return float(TextPath((0.0, 0.0), line, prop=prop).get_extents().width) if line else 0.0

    lines: list[str] = []
    for word in text.split(" "):
        if lines and width(lines[-1] + " " + word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _tick_formatter(axis: Axes) -> FuncFormatter:
    """Tick labels with one k/M/G scale per axis, from its largest magnitude (as the CLI's)."""

    def fmt(v: float, _pos: int | None = None) -> str:
        lo, hi = axis.get_ylim()
        a = max(abs(lo), abs(hi))
        div, suffix = (1e9, "G") if a >= 1e10 else (1e6, "M") if a >= 1e7 else (1e3, "k") if a >= 1e4 else (1.0, "")
        if v != 0.0 and abs(v) < 1e-3 and div == 1.0:
            return f"{v:.1e}"
        s = f"{v / div:.3f}".rstrip("0").rstrip(".")
        return "0" if s in ("0", "-0") else s + suffix

    return FuncFormatter(fmt)


def _short_number(v: float) -> str:
    """A value as the CLI prints it: whole from 100 up, else up to 3 decimals; 1.234e9 style
    for the very large and very small."""
    if not math.isfinite(v):
        return str(v)
    if v != 0.0 and (abs(v) >= 1e9 or abs(v) < 1e-3):
        mant, exp = f"{v:.3e}".split("e")
        return f"{mant}e{int(exp)}"
    s = f"{v:.0f}" if abs(v) >= 100.0 else f"{v:.3f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s == "-0" else s
