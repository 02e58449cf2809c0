"""Machines: presets and machine files, resolved and checked by the simulator itself."""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional, Sequence

from . import _native


def _value_text(value: Any) -> str:
    """A Python value as the text of `--set KEY=VALUE` (booleans as `true`/`false`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Machine:
    """A machine: a preset or a machine TOML file, with `--set` overrides and an optional
    processor count, resolved and checked exactly as the command line resolves them.

    Keys read and written with their dotted names (those of `commlab machine show`); setting a
    key checks its type and range at once and raises :class:`commlab.InputError` with the
    command line's message::

        >>> m = commlab.machine("alewife")
        >>> m["network.router_latency_ns"]
        ...
        >>> m["network.router_latency_ns"] = 80      # as --set network.router_latency_ns=80
        >>> commlab.run("em3d", machine=m, variant="sm")["cycles"]

    A `Machine` is a value: pass it to :func:`commlab.run` or :func:`commlab.sweep`.
    """

    def __init__(self, name_or_path: str = "alewife", sets: Sequence[str] = (), procs: Optional[int] = None):
        self._source = str(name_or_path)
        self._sets = [str(s) for s in sets]
        self._procs = procs
        self._resolve()

    def _resolve(self) -> None:
        self._info = json.loads(_native.machine(self._source, self._sets, self._procs))

    @property
    def source(self) -> str:
        """The preset name or file path the machine starts from."""
        return self._source

    @property
    def sets(self) -> list:
        """The overrides, as `--set KEY=VALUE` texts, in order."""
        return list(self._sets)

    @property
    def name(self) -> str:
        return self._info["name"]

    @property
    def procs(self) -> int:
        """Processors of the resolved machine."""
        return self._info["procs"]

    @property
    def requested_procs(self) -> Optional[int]:
        """The processor count asked for (`--procs`), or None for the machine's own."""
        return self._procs

    @property
    def fingerprint(self) -> str:
        """The fingerprint results records carry: same fingerprint, same machine."""
        return self._info["fingerprint"]

    @property
    def network(self) -> str:
        """The network, e.g. "mesh 8x4 (+8 I/O nodes)"."""
        return self._info["network"]

    @property
    def bisection_bytes_per_cycle(self) -> float:
        """Bisection bandwidth in bytes per processor cycle, both directions."""
        return self._info["bisection_bytes_per_cycle"]

    def to_dict(self) -> dict:
        """The resolved spec as nested dicts (sections, then keys)."""
        return json.loads(json.dumps(self._info["spec"]))

    def toml(self) -> str:
        """The resolved machine as documented TOML (`commlab machine show`): a machine file."""
        return _native.machine_toml(self._source, self._sets, self._procs)

    def keys(self) -> list:
        """Every dotted key (`section.key`) of the spec."""
        return list(self._walk(self._info["spec"], ""))

    @staticmethod
    def _walk(node: Any, prefix: str) -> Iterator[str]:
        for k, v in node.items():
            if isinstance(v, dict):
                yield from Machine._walk(v, f"{prefix}{k}.")
            else:
                yield f"{prefix}{k}"

    def __getitem__(self, key: str) -> Any:
        node: Any = self._info["spec"]
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise KeyError(f"`{key}` is not a key of machine {self.name} (see Machine.keys() or `commlab machine show`)")
            node = node[part]
        return node

    def __setitem__(self, key: str, value: Any) -> None:
        sets = self._sets + [f"{key}={_value_text(value)}"]
        info = json.loads(_native.machine(self._source, sets, self._procs))
        self._sets, self._info = sets, info

    def with_procs(self, procs: int) -> "Machine":
        """The same machine resized to `procs` processors (as `--procs`)."""
        return Machine(self._source, self._sets, procs)

    def copy(self) -> "Machine":
        return Machine(self._source, self._sets, self._procs)

    def __repr__(self) -> str:
        sets = "".join(f" --set {s}" for s in self._sets)
        procs = f" --procs {self._procs}" if self._procs is not None else ""
        return f"<commlab.Machine {self._source}{sets}{procs}: {self.procs} procs, {self.network}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Machine) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)


def machines() -> list:
    """The preset names (`commlab machines`)."""
    return list(_native.machines())


def machine(name_or_path: str = "alewife", sets: Sequence[str] = (), procs: Optional[int] = None) -> Machine:
    """A preset by name or a machine TOML file by path, with overrides (`KEY=VALUE` texts) and
    an optional processor count; raises :class:`commlab.InputError` for a bad name, file, key
    or value, with the command line's message."""
    return Machine(name_or_path, sets, procs)


def _as_args(m: "str | Machine", sets: Optional[Sequence[str]], procs: Optional[int]) -> tuple:
    """(machine source, --set list, --procs) for the native calls."""
    extra = [str(s) for s in (sets or ())]
    if isinstance(m, Machine):
        return m.source, m.sets + extra, procs if procs is not None else m.requested_procs
    if not isinstance(m, str):
        raise TypeError(f"machine must be a preset name, a path or a commlab.Machine, not {type(m).__name__}")
    return m, extra, procs
