"""The notebook docs/notebooks/em3d-bisection.py runs as a script (so it cannot rot) and
leaves its results, a complete sweep, and its figure."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO


def test_the_em3d_bisection_notebook_runs(tmp_path):
    env = dict(os.environ, COMMLAB_NOTEBOOK_OUT=str(tmp_path), MPLBACKEND="Agg")
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "notebooks" / "em3d-bisection.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "results.jsonl") as f:
        records = [json.loads(x) for x in f if x.strip()]
    assert len(records) == 5 * 5 and all(r["check"]["ok"] for r in records)
    assert (tmp_path / "em3d-bisection.png").stat().st_size > 10_000
    assert "crossover" in (tmp_path / "summary.json").read_text()
