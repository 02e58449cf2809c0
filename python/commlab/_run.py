"""Running applications in-process, and their results."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _native
from ._machine import Machine, _as_args, _value_text


class CheckFailedWarning(UserWarning):
    """A run completed but its answer check failed (the command line exits 1 for it)."""


class RunFailedWarning(UserWarning):
    """A run of a sweep failed (deadlock, limit); it is not in the results."""


def apps() -> list:
    """Every application with its variants and parameters, as `commlab apps --json`: a list of
    dicts with `name`, `summary`, `variants` and `params` (each `name`, `default`, `doc`)."""
    return json.loads(_native.apps())


def _param_args(params: Optional[Mapping[str, Any]]) -> list:
    if params is None:
        return []
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict of name -> value, not {type(params).__name__}")
    return [f"{k}={_value_text(v)}" for k, v in params.items()]


class Result(Mapping):
    """One run: the object `commlab run --json` prints, read-only.

    Index it like the dict it is (`r["cycles"]`, `r["breakdown"]["compute"]`,
    `r["counters"]`), or use the shortcuts `r.cycles`, `r.variant`, `r.ok`. `to_dict()` gives
    a copy that is identical to the command line's JSON object."""

    __slots__ = ("_record",)

    def __init__(self, record: Mapping):
        self._record = dict(record)

    def __getitem__(self, key: str) -> Any:
        return self._record[key]

    def __iter__(self):
        return iter(self._record)

    def __len__(self) -> int:
        return len(self._record)

    def to_dict(self) -> dict:
        """The record as a new dict, identical to `commlab run --json`'s object."""
        return copy.deepcopy(self._record)

    @property
    def cycles(self) -> float:
        """Cycles of the timed region."""
        return self._record["cycles"]

    @property
    def variant(self) -> str:
        return self._record["variant"]

    @property
    def app(self) -> str:
        return self._record["app"]

    @property
    def ok(self) -> bool:
        """The answer check passed."""
        return bool(self._record["check"]["ok"])

    def __repr__(self) -> str:
        check = "check ok" if self.ok else "CHECK FAILED"
        return (
            f"<commlab.Result {self.app} [{self.variant}] on {self._record['machine']} "
            f"({self._record['procs']} procs): {self.cycles:.0f} cycles, {check}>"
        )


def run(
    app: str,
    machine: Union[str, Machine] = "alewife",
    procs: Optional[int] = None,
    variant: str = "all",
    params: Optional[Mapping[str, Any]] = None,
    seed: int = 1,
    sets: Optional[Sequence[str]] = None,
    jobs: Optional[int] = None,
    latencies: bool = False,
) -> Union[Result, list]:
    """Run an application on a simulated machine, in this process (the GIL is released while
    it simulates), as `commlab run APP --json` does.

    Args:
        app: an application name (see :func:`commlab.apps`), e.g. ``"em3d"``.
        machine: a preset name, a machine TOML file, or a :class:`commlab.Machine`.
        procs: resize the machine to this many processors (`--procs`).
        variant: one variant, or ``"all"`` (the default, as on the command line).
        params: application parameters, e.g. ``{"nodes": 640, "remote": 0.5}`` (`--param`).
        seed: seed of every pseudo-random choice; same seed, same results.
        sets: machine overrides as ``"KEY=VALUE"`` texts (`--set`), after the Machine's own.
        jobs: variants run at once on threads (default: the cores); results do not depend on it.
        latencies: record latency distributions (`--stats latency`): each result's
            ``"latencies"``, as a DataFrame with :func:`commlab.latencies`.

    Returns:
        A :class:`Result` when one variant is named, else a list of them in variant order.
        A failed answer check is in the result (``r.ok`` is False) and warns
        (:class:`CheckFailedWarning`).

    Raises:
        InputError: bad app, variant, parameter, machine, key or value (the command line's
            message, its exit status 2).
        RunError: a run failed (deadlock, a limit); the command line's exit status 1.

    Example::

        >>> import commlab
        >>> r = commlab.run("em3d", variant="sm", params={"nodes": 640}, procs=8)
        >>> r["cycles"], r["breakdown"]["compute"]
        >>> commlab.runs_to_frame(commlab.run("em3d", procs=8))   # every variant, as a DataFrame
    """
    source, set_list, procs = _as_args(machine, sets, procs)
    if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs must be a whole number >= 1, not {jobs!r}")
    lines = _native.run(app, source, set_list, procs, variant, _param_args(params), int(seed), jobs, bool(latencies))
    results = [Result(json.loads(line)) for line in lines]
    for r in results:
        if not r.ok:
            warnings.warn(
                f"{r.app} [{r.variant}]: answer check failed: {r['check']['detail']}", CheckFailedWarning, stacklevel=2
            )
    return results if variant == "all" else results[0]


def runs_to_frame(results: Iterable[Union[Result, Mapping]]):
    """Results (or record dicts) as a pandas DataFrame, one row per run, nested objects
    flattened with dots (``variant`` is a Categorical in the app's variant order): ``cycles``, ``variant``, ``breakdown.compute``,
    ``volume_bytes.data``, ``counters.<name>``, ``params.<name>``, ``check.ok``,
    ``sim.wall_seconds``, and for sweeps ``point`` and ``vary.<key>``."""
    import pandas as pd

    records = [r.to_dict() if isinstance(r, Result) else dict(r) for r in results]
    df = pd.json_normalize(records)
    # Variants in the app's order (a sweep with jobs writes them in the order they finish),
    # so that tables and charts list them as the command line does.
    if "variant" in df and "app" in df and df["app"].nunique() == 1:
        known = next((a["variants"] for a in apps() if a["name"] == df["app"].iloc[0]), [])
        present = list(dict.fromkeys(df["variant"]))
        order = [v for v in known if v in present] + [v for v in present if v not in known]
        df["variant"] = pd.Categorical(df["variant"], categories=order)
    return df


def read_records(path: str) -> list:
    """The records of a results file (`commlab run --json --out`, a sweep's results.jsonl),
    as dicts. An incomplete last line (a run cut off while it was written) is left out, as
    `--resume` leaves it; any other line that is not a JSON object raises InputError naming it."""
    from . import InputError

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"cannot read results file `{path}`: {e.strerror}") from None
    lines = data.split(b"\n")
    torn = not data.endswith(b"\n") and data.strip() != b""
    records = []
    for no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        last = no == len(lines)
        try:
            obj = json.loads(raw)
        except ValueError:
            if last and torn:
                break
            raise InputError(f"{path} line {no}: not a JSON object (the file is damaged)") from None
        if not isinstance(obj, dict) or "variant" not in obj:
            raise InputError(f"{path} line {no}: not a commlab result record (no `variant`)")
        records.append(obj)
    return records


def read_results(path: str):
    """A results file as a DataFrame (see :func:`runs_to_frame` for the columns)."""
    return runs_to_frame(read_records(path))
