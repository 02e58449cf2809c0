"""commlab: a laboratory for multiprocessor communication mechanisms, from Python.

The simulator runs in this process (:func:`run`, :func:`sweep` with ``jobs``) or on a Dask
cluster (:func:`sweep` with ``client=`` or ``scheduler=``); results are the command line's
records, and sweeps read and write the command line's ``results.jsonl``, so the two continue
each other's work.

    >>> import commlab
    >>> commlab.machines()                                 # presets
    >>> m = commlab.machine("alewife"); m["network.router_latency_ns"] = 80
    >>> r = commlab.run("em3d", machine=m, variant="sm")   # one run: r["cycles"], r.to_dict()
    >>> df = commlab.runs_to_frame(commlab.run("em3d"))    # every variant as a DataFrame
    >>> df = commlab.sweep("em3d", {"cross_traffic.rate_bytes_per_cycle": "0:8:5"}, jobs=2)
    >>> commlab.plot.runtime(df)                            # matplotlib figures
    >>> commlab.latencies(commlab.run("em3d", latencies=True))  # latency percentiles per run
    >>> commlab.read_stats("sweep-dir", "interval")         # a sweep's --stats files

Errors raise :class:`InputError` (bad input; the command line's exit status 2) or
:class:`RunError` (a failed run; status 1), with the command line's one-line messages.
"""

from ._native import CommlabError, InputError, RunError, __version__
from ._machine import Machine, machine, machines
from ._run import CheckFailedWarning, Result, RunFailedWarning, apps, read_records, read_results, run, runs_to_frame
from ._stats import latencies, read_stats
from ._sweep import sweep

__all__ = [
    "CheckFailedWarning",
    "CommlabError",
    "InputError",
    "Machine",
    "Result",
    "RunError",
    "RunFailedWarning",
    "__version__",
    "apps",
    "latencies",
    "machine",
    "machines",
    "plot",
    "read_records",
    "read_stats",
    "read_results",
    "run",
    "runs_to_frame",
    "sweep",
]


def __getattr__(name: str):
    # matplotlib is imported only when a plot is asked for.
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'commlab' has no attribute {name!r}")
