"""What the package's tests share: the commlab binary (to compare with the command line) and
small, fast runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# EM3D small enough for a run in well under a second.
SMALL_PARAMS = {"nodes": 640, "iterations": 2}
SMALL_ARGS = ["--procs", "8", "--param", "nodes=640", "--param", "iterations=2"]


def commlab_bin() -> str:
    """$COMMLAB_BIN, else target/release/commlab of the repository (or $CARGO_TARGET_DIR),
    else `commlab` on PATH."""
    env = os.environ.get("COMMLAB_BIN")
    if env:
        return env
    candidates = [REPO / "target" / "release" / "commlab"]
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.insert(0, Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "commlab")
    for c in candidates:
        if c.is_file():
            return str(c)
    found = shutil.which("commlab")
    if found:
        return found
    pytest.fail("no commlab binary: set COMMLAB_BIN or build it (cargo build --release)")


def cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    """Run the command line; with `ok`, fail the test unless it exits 0."""
    done = subprocess.run([commlab_bin(), *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert done.returncode == 0, f"commlab {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return done


def cli_error(*args: str) -> str:
    """The one-line message of a command that must fail, without its `commlab: ` prefix."""
    done = cli(*args, ok=False)
    assert done.returncode != 0, f"commlab {' '.join(args)} should have failed"
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("commlab: "), line
    return line[len("commlab: ") :]


def without_wall_clock(record: dict) -> dict:
    """A record without its wall-clock fields (`sim`: wall seconds and events per second
    differ from run to run; the events count does not, and stays)."""
    r = json.loads(json.dumps(record))
    r["sim"] = {"events": r["sim"]["events"]}
    return r


def rows(path: Path) -> list:
    """A results file's records without wall-clock fields, sorted by (point, variant)."""
    with open(path) as f:
        recs = [without_wall_clock(json.loads(line)) for line in f if line.strip()]
    return sorted(recs, key=lambda r: (r.get("point", -1), r["variant"]))
