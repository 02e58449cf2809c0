"""Sweeps: a grid of machine keys and app parameters, run on this machine's threads or on a
Dask cluster, with the command line's results file and resume semantics."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import warnings
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _native
from ._machine import Machine, _as_args, _value_text
from ._run import CheckFailedWarning, RunFailedWarning, _param_args, read_results


def _vary_args(vary: Mapping[str, Any]) -> list:
    """`{key: spec}` as `--vary KEY=SPEC` texts; a spec is the command line's text
    (``"0:8:9"``, ``"10:1000:6:log"``, ``"1,2,3"``) or a sequence of values."""
    if not isinstance(vary, Mapping) or not vary:
        raise ValueError("vary must be a non-empty dict of key -> values, e.g. {'cross_traffic.rate_bytes_per_cycle': '0:8:9'}")
    out = []
    for key, spec in vary.items():
        if isinstance(spec, str):
            text = spec
        elif isinstance(spec, (list, tuple, range)) or hasattr(spec, "tolist"):
            values = list(spec.tolist() if hasattr(spec, "tolist") else spec)
            if not values:
                raise ValueError(f"vary[{key!r}] has no values")
            text = ",".join(_value_text(v) for v in values)
        else:
            text = _value_text(spec)
        out.append(f"{key}={text}")
    return out


def _run_task(task: str) -> tuple:
    """What a Dask worker runs: one task of a sweep plan. Returns (True, record line) or
    (False, exit status, message); errors travel as values, so nothing but builtins is pickled."""
    try:
        return (True, _native.run_task(task))
    except _native.CommlabError as e:
        status = 2 if isinstance(e, _native.InputError) else 1
        return (False, status, str(e))


class _Progress:
    """One line per finished run on stderr (a sweep of thousands shows where it is)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled, self.start = total, 0, enabled, time.monotonic()

    def step(self, what: str) -> None:
        self.done += 1
        if self.enabled:
            left = (time.monotonic() - self.start) / self.done * (self.total - self.done)
            print(f"point {self.done}/{self.total} done: {what} (about {left:.0f} s left)", file=sys.stderr)

    def note(self, what: str) -> None:
        if self.enabled:
            print(what, file=sys.stderr)


def sweep(
    app: str,
    vary: Mapping[str, Any],
    *,
    machine: Union[str, Machine] = "alewife",
    procs: Optional[int] = None,
    variant: str = "all",
    params: Optional[Mapping[str, Any]] = None,
    sets: Optional[Sequence[str]] = None,
    seed: int = 1,
    jobs: int = 1,
    out: Optional[Union[str, os.PathLike]] = None,
    resume: bool = False,
    client: Any = None,
    scheduler: Optional[str] = None,
    progress: Optional[bool] = None,
    stats: Optional[Sequence[str]] = None,
):
    """Run an application over a grid of machine keys and app parameters, one simulation per
    (point, variant), as `commlab sweep` does, and return the results as a DataFrame.

    Args:
        app: application name.
        vary: ``{key: values}``, first key outermost (the x axis of the summary). A key is an
            app parameter, ``"procs"`` (the processor count, as ``procs`` resizes the machine;
            not with ``procs`` given too) or a machine key; values are the command line's spec text
            (``"0:8:9"`` evenly spaced, ``"10:1000:6:log"`` geometric, ``"1,2,3"``) or a list.
        machine, procs, variant, params, sets, seed: as for :func:`commlab.run`.
        jobs: runs at once on this machine's threads (without a Dask client).
        out: directory of ``results.jsonl`` and ``summary.json``, the same files as
            ``commlab sweep --out``; a temporary directory when not given.
        resume: continue the sweep in ``out``: skip the (point, variant) runs already there
            (the command line and Python continue each other's files). Without it, an
            existing non-empty results file is an error.
        client: a ``dask.distributed.Client``: every (point, variant) becomes a task run by a
            worker (which needs commlab installed); each result is appended to the results file
            by this process as it arrives, so a killed sweep resumes with ``resume=True`` and
            loses nothing. A failed task is reported with its point and retried once.
        scheduler: the address of a Dask scheduler (``"tcp://host:8786"``), instead of `client`.
        progress: a line per finished run on stderr (default: when stderr is a terminal).
        stats: detailed statistics kept for every run, as ``commlab sweep --stats``: any of
            ``"per-node"``, ``"per-link"``, ``"latency"``, ``"interval=CYCLES"``; one file per
            run under ``out/stats/KIND/`` (with Dask, written by the worker, so ``out`` must be
            on a filesystem the workers share); read them with :func:`commlab.read_stats`, and
            latencies (also in each record) with :func:`commlab.latencies`.

    Returns:
        A DataFrame of every run of the grid (those of earlier runs of a resumed sweep too),
        columns as :func:`commlab.runs_to_frame`; ``df.attrs`` holds ``out``, ``summary``
        (the summary.json object: curves, fastest variant, crossovers) and ``problems``.
        Failed runs and failed checks warn (:class:`RunFailedWarning`,
        :class:`CheckFailedWarning`).

    Example::

        >>> df = commlab.sweep("em3d", {"cross_traffic.rate_bytes_per_cycle": "0:8:5"},
        ...                    procs=8, params={"nodes": 640}, jobs=2, out="sweep-bisection")
        >>> df.pivot_table(index="vary.cross_traffic.rate_bytes_per_cycle", columns="variant", values="cycles")
    """
    source, set_list, procs = _as_args(machine, sets, procs)
    vary_list = _vary_args(vary)
    param_list = _param_args(params)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, not {jobs!r}")
    out_dir = str(out) if out is not None else tempfile.mkdtemp(prefix=f"commlab-sweep-{app}-")
    show = sys.stderr.isatty() if progress is None else progress
    common = (app, vary_list, variant, param_list, set_list, source, procs, int(seed))
    if isinstance(stats, str):
        stats = [stats]
    stats_list = [str(s) for s in (stats or [])]
    if client is None and scheduler is None:
        line, text, problems = _native.sweep(*common, jobs, out_dir, bool(resume), show, stats_list)
    else:
        line, text, problems = _distributed(common, out_dir, bool(resume), client, scheduler, show, stats_list)
    for p in problems:
        kind = CheckFailedWarning if "answer check failed" in p else RunFailedWarning
        warnings.warn(p, kind, stacklevel=2)
    df = read_results(os.path.join(out_dir, "results.jsonl"))
    with open(os.path.join(out_dir, "summary.json")) as f:
        df.attrs["summary"] = json.load(f)
    df.attrs["out"] = out_dir
    df.attrs["problems"] = list(problems)
    df.attrs["report"] = line
    return df


def _distributed(
    common: tuple, out_dir: str, resume: bool, client: Any, scheduler: Optional[str], show: bool, stats: list
):
    """The sweep's runs as Dask tasks; this process appends each record as it arrives."""
    from dask.distributed import Client, as_completed

    results_path, total, tasks, note = _native.sweep_plan(*common, out_dir, resume, stats)
    own = None
    if client is None:
        client = own = Client(scheduler)
    progress = _Progress(len(tasks), show)
    if note and resume:
        progress.note(note)
    failures: list = []
    checks: list = []
    try:
        whats = {}
        futures = []
        for t in tasks:
            f = client.submit(_run_task, t, pure=False)
            whats[f.key] = (t, json.loads(t)["what"], 0)
            futures.append(f)
        queue = as_completed(futures)
        with open(results_path, "a", encoding="utf-8") as out:
            for fut in queue:
                task, what, tries = whats.pop(fut.key)
                try:
                    outcome = fut.result()
                except Exception as e:  # the worker died or the task could not run
                    outcome = (False, 1, f"{what}: the task failed on the cluster: {e!r}")
                if outcome[0]:
                    line = outcome[1]
                    out.write(line)
                    out.flush()
                    record = json.loads(line)
                    ok = record["check"]["ok"]
                    if not ok:
                        checks.append(f"{what}: answer check failed: {record['check']['detail']}")
                    progress.step(f"{what}: {record['cycles']:.0f} cycles{'' if ok else ', CHECK FAILED'}")
                    continue
                _, status, message = outcome
                if status == 2:
                    from . import InputError

                    raise InputError(message)
                if tries == 0:
                    progress.note(f"run failed: {message}; retrying once")
                    again = client.submit(_run_task, task, pure=False)
                    whats[again.key] = (task, what, 1)
                    queue.add(again)
                else:
                    progress.note(f"run failed: {message}")
                    failures.append(message)
                    progress.step(f"{what}: FAILED")
    finally:
        if own is not None:
            own.close()
    line, text, problems = _native.sweep_finish(*common, out_dir, failures)
    return line, text, list(problems) + checks
