"""Detailed statistics as DataFrames: latency distributions, interval statistics, per-node and
per-link rows, from results or from the files `commlab run --stats` and `commlab sweep --stats`
write."""

from __future__ import annotations

import glob
import json
import os
from typing import Iterable, Mapping, Optional, Union

KINDS = ("per-node", "per-link", "latency", "interval")
# What identifies a run in a table of rows from several runs.
_RUN_COLUMNS = ("app", "variant", "point")


def latencies(results: Iterable[Mapping]):
    """The latency distributions of runs (``commlab.run(..., latencies=True)``, a sweep with
    ``stats=["latency"]``, or records read with :func:`commlab.read_records`) as a DataFrame:
    one row per run and (metric, class), columns ``app``, ``variant``, ``point`` and
    ``vary.<key>`` (sweeps), ``metric`` (miss, message, ni_wait, lock_wait), ``class``,
    ``count``, ``sum``, ``mean``, ``min``, ``p50``, ``p90``, ``p99``, ``max`` (cycles) and
    ``buckets`` (a list of [lo, hi, count]). Runs without recorded latencies add no rows."""
    import pandas as pd

    rows = []
    for r in results:
        rec = r.to_dict() if hasattr(r, "to_dict") else dict(r)
        for d in rec.get("latencies") or []:
            row = {"app": rec.get("app"), "variant": rec.get("variant")}
            if rec.get("point") is not None:
                row["point"] = rec["point"]
            for k, v in (rec.get("vary") or {}).items():
                row[f"vary.{k}"] = v
            row.update(d)
            count = d.get("count", 0)
            row.setdefault("mean", d.get("sum", 0.0) / count if count else 0.0)
            rows.append(row)
    return pd.DataFrame(rows)


def _read_lines(path: str) -> list:
    from . import InputError

    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    raise InputError(f"{path} line {no}: not a JSON object (the file is damaged)") from None
    except OSError as e:
        raise InputError(f"cannot read statistics file `{path}`: {e.strerror}") from None
    return rows


def read_stats(path: Union[str, os.PathLike], kind: Optional[str] = None):
    """Detailed statistics as one DataFrame, nested objects flattened with dots.

    ``path`` is either a file written by ``commlab run --stats KIND=FILE`` (JSON Lines or
    ``.csv``), or a sweep's or experiment's directory with ``kind`` one of ``per-node``,
    ``per-link``, ``latency``, ``interval`` (the files ``--stats KIND`` kept, one per run,
    concatenated in point then variant order; each row has its ``point`` and ``vary.<key>``).

    Interval rows have ``interval``, ``start``, ``end`` (cycles), ``total.<category>`` (the
    category summed over the processors in that stretch), ``breakdown.<category>`` (a list,
    one value per processor), ``traffic.<class>`` (bytes), ``link_utilization`` (a list per
    link) and the NI queue depths.

    Example::

        >>> df = commlab.sweep("em3d", {"remote": [0.1, 0.5]}, procs=8, stats=["interval=5000"], out="sw")
        >>> iv = commlab.read_stats("sw", "interval")
        >>> iv.pivot_table(index="start", columns="vary.remote", values="total.synchronization")
    """
    import pandas as pd

    from . import InputError

    path = os.fspath(path)
    if os.path.isdir(path):
        if kind not in KINDS:
            raise InputError(f"read_stats(`{path}`): a directory needs kind= one of {', '.join(KINDS)}, not {kind!r}")
        files = sorted(glob.glob(os.path.join(path, "stats", kind, "p*.jsonl")))
        if not files:
            raise InputError(
                f"`{path}` holds no {kind} statistics (stats/{kind}/): run the sweep with --stats {kind}"
                + ("=CYCLES" if kind == "interval" else "")
            )
        rows = [row for f in files for row in _read_lines(f)]
    elif path.endswith(".csv"):
        try:
            return pd.read_csv(path)
        except OSError as e:
            raise InputError(f"cannot read statistics file `{path}`: {e.strerror}") from None
    else:
        rows = _read_lines(path)
    df = pd.json_normalize(rows, max_level=1)
    order = [c for c in _RUN_COLUMNS if c in df.columns]
    return df[order + [c for c in df.columns if c not in order]]
