"""Sweeps from Python, on threads and on Dask, against `commlab sweep`: the same records, the
same summary, and results files that the command line and Python continue for each other."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import commlab
from conftest import SMALL_ARGS, SMALL_PARAMS, cli, cli_error, rows

VARY = {"cross_traffic.rate_bytes_per_cycle": "0:8:3", "remote": [0.1, 0.5]}
VARY_ARGS = ["--vary", "cross_traffic.rate_bytes_per_cycle=0:8:3", "--vary", "remote=0.1,0.5"]


@pytest.fixture(scope="module")
def cli_sweep(tmp_path_factory) -> Path:
    """The reference: `commlab sweep --jobs 1` over the grid."""
    out = tmp_path_factory.mktemp("cli")
    cli("sweep", "em3d", *SMALL_ARGS, *VARY_ARGS, "--jobs", "1", "--out", str(out))
    return out


def summary(out) -> dict:
    with open(Path(out) / "summary.json") as f:
        return json.load(f)


def test_a_threaded_sweep_equals_the_command_lines(cli_sweep, tmp_path):
    df = commlab.sweep("em3d", VARY, procs=8, params=SMALL_PARAMS, jobs=2, out=tmp_path)
    assert rows(tmp_path / "results.jsonl") == rows(cli_sweep / "results.jsonl")
    assert summary(tmp_path) == summary(cli_sweep)
    assert df.attrs["summary"] == summary(cli_sweep)
    assert len(df) == 3 * 2 * 5
    assert {"vary.cross_traffic.rate_bytes_per_cycle", "vary.remote", "point"} <= set(df.columns)


def test_an_existing_sweep_needs_resume_as_on_the_command_line(cli_sweep, tmp_path):
    cli("sweep", "em3d", *SMALL_ARGS, "--vary", "remote=0.1,0.5", "--variant", "sm", "--out", str(tmp_path))
    with pytest.raises(commlab.InputError) as e:
        commlab.sweep("em3d", {"remote": [0.1, 0.5]}, variant="sm", procs=8, params=SMALL_PARAMS, out=tmp_path)
    assert str(e.value) == cli_error(
        "sweep", "em3d", *SMALL_ARGS, "--vary", "remote=0.1,0.5", "--variant", "sm", "--out", str(tmp_path)
    )


def cut(path: Path, keep: int) -> None:
    """Keep `keep` complete lines and half of the next (a run cut off while it was written)."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:keep]) + lines[keep][: len(lines[keep]) // 2])


def test_python_resumes_the_command_lines_file_and_the_other_way_round(cli_sweep, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    # The command line began, Python finishes.
    a.mkdir()
    (a / "results.jsonl").write_text((cli_sweep / "results.jsonl").read_text())
    cut(a / "results.jsonl", 7)
    commlab.sweep("em3d", VARY, procs=8, params=SMALL_PARAMS, jobs=2, out=a, resume=True)
    assert rows(a / "results.jsonl") == rows(cli_sweep / "results.jsonl")
    # Python began, the command line finishes.
    commlab.sweep("em3d", VARY, procs=8, params=SMALL_PARAMS, jobs=2, out=b)
    cut(b / "results.jsonl", 11)
    cli("sweep", "em3d", *SMALL_ARGS, *VARY_ARGS, "--out", str(b), "--resume")
    assert rows(b / "results.jsonl") == rows(cli_sweep / "results.jsonl")
    assert summary(a) == summary(b) == summary(cli_sweep)


dask = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with Client(c) as client:
            yield client


def test_a_dask_sweep_equals_the_command_lines(cli_sweep, cluster, tmp_path):
    df = commlab.sweep("em3d", VARY, procs=8, params=SMALL_PARAMS, out=tmp_path, client=cluster)
    assert rows(tmp_path / "results.jsonl") == rows(cli_sweep / "results.jsonl")
    assert summary(tmp_path) == summary(cli_sweep)
    assert len(df) == 30
    # Resuming a complete sweep runs nothing and changes nothing.
    before = (tmp_path / "results.jsonl").read_text()
    commlab.sweep("em3d", VARY, procs=8, params=SMALL_PARAMS, out=tmp_path, client=cluster, resume=True)
    assert (tmp_path / "results.jsonl").read_text() == before


def test_a_dask_sweep_keeps_statistics_per_point(cluster, tmp_path):
    vary = {"remote": [0.1, 0.5]}
    df = commlab.sweep("em3d", vary, procs=8, params=SMALL_PARAMS, out=tmp_path / "dask", client=cluster, stats=["per-node"])
    commlab.sweep("em3d", vary, procs=8, params=SMALL_PARAMS, out=tmp_path / "threads", jobs=2, stats=["per-node"])
    files = sorted(p.name for p in (tmp_path / "dask" / "stats" / "per-node").iterdir())
    assert files == sorted(f"p{p:05}.{v}.jsonl" for p, v in zip(df["point"], df["variant"]))
    for f in files:
        assert (tmp_path / "dask" / "stats" / "per-node" / f).read_text() == (
            tmp_path / "threads" / "stats" / "per-node" / f
        ).read_text()


def test_a_failed_task_is_reported_with_its_point_after_one_retry(cluster, tmp_path, capfd):
    # A limit on simulated events makes every run fail: each is retried once, then reported.
    with pytest.warns(commlab.RunFailedWarning, match=r"em3d \[sm\] remote=0.1"):
        df = commlab.sweep(
            "em3d",
            {"remote": [0.1]},
            variant="sm",
            procs=8,
            params=SMALL_PARAMS,
            sets=["limits.max_events=1000"],
            out=tmp_path,
            client=cluster,
            progress=True,
        )
    err = capfd.readouterr().err
    assert "retrying once" in err and err.count("run failed") == 2
    assert len(df) == 0 or "cycles" not in df
    assert summary(tmp_path)["failed"], summary(tmp_path)


KILLED = textwrap.dedent(
    """
    import sys, commlab
    from dask.distributed import Client, LocalCluster
    if __name__ == "__main__":
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as c, Client(c) as client:
            commlab.sweep("em3d", {"remote": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]}, procs=8,
                          params={"nodes": 2000, "iterations": 4}, out=sys.argv[1], client=client)
    """
)


def test_a_client_killed_mid_sweep_resumes_losing_and_duplicating_nothing(cluster, tmp_path):
    out = tmp_path / "killed"
    script = tmp_path / "sweep.py"
    script.write_text(KILLED)
    proc = subprocess.Popen([sys.executable, str(script), str(out)], start_new_session=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = results.read_text().count("\n")
    assert 3 <= done_before < 40, done_before
    vary = {"remote": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]}
    params = {"nodes": 2000, "iterations": 4}
    commlab.sweep("em3d", vary, procs=8, params=params, out=out, client=cluster, resume=True)
    ref = tmp_path / "ref"
    cli("sweep", "em3d", "--procs", "8", "--param", "nodes=2000", "--param", "iterations=4",
        "--vary", "remote=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8", "--jobs", "2", "--out", str(ref))
    got = rows(results)
    assert len(got) == 40 and len({(r["point"], r["variant"]) for r in got}) == 40
    assert got == rows(ref / "results.jsonl")


def test_the_command_line_entry_point_runs_a_dask_sweep(cli_sweep, cluster, tmp_path):
    address = cluster.scheduler.address
    args = ["em3d", "--procs", "8", "--param", "nodes=640", "--param", "iterations=2", *VARY_ARGS]
    done = subprocess.run(
        [sys.executable, "-m", "commlab", "sweep", *args, "--scheduler", address, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "sweep em3d: 6 points x 5 variants" in done.stdout
    assert rows(tmp_path / "results.jsonl") == rows(cli_sweep / "results.jsonl")
    bad = subprocess.run(
        [sys.executable, "-m", "commlab", "sweep", "em3d", "--vary", "nodes=x", "--scheduler", address],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == "commlab: " + cli_error("sweep", "em3d", "--vary", "nodes=x")


def test_a_huge_grid_is_an_exception_not_a_dead_interpreter(tmp_path):
    # Regression (issue 36): this grid of 1e9 points was built before it was counted, and the
    # failed allocation killed the interpreter. It is counted first and refused, in-process.
    vary = {"rounds": "1:100000:100000", "hops": "1:10:10", "network.router_latency_ns": "1:100:1000"}
    started = time.monotonic()
    with pytest.raises(commlab.InputError) as e:
        commlab.sweep("am-latency", vary, out=tmp_path / "huge")
    assert "limit of 100000 runs" in str(e.value)
    assert time.monotonic() - started < 20
    # The interpreter is alive and the package still works.
    assert "am-latency" in [a["name"] for a in commlab.apps()]


def test_sweep_statistics_are_frames_that_agree_with_the_records(cli_sweep, tmp_path):
    """Issue 37, item 4: a sweep's --stats files as DataFrames (read_stats), and latency
    distributions from records (latencies), each agreeing with the runs' own totals; the same
    files as `commlab sweep --stats`."""
    vary = {"remote": [0.1, 0.5]}
    stats = ["latency", "interval=2000", "per-node"]
    df = commlab.sweep("em3d", vary, procs=8, params=SMALL_PARAMS, jobs=2, out=tmp_path / "py", stats=stats)
    cli(
        "sweep", "em3d", *SMALL_ARGS, "--vary", "remote=0.1,0.5", "--jobs", "1", "--out", str(tmp_path / "cli"),
        *[a for s in stats for a in ("--stats", s)],
    )
    for kind in ["latency", "interval", "per-node"]:
        for f in sorted((tmp_path / "cli" / "stats" / kind).iterdir()):
            assert f.read_text() == (tmp_path / "py" / "stats" / kind / f.name).read_text(), f"{kind}/{f.name}"
    lat = commlab.latencies(commlab.read_records(str(tmp_path / "py" / "results.jsonl")))
    assert set(lat["variant"]) == set(df["variant"]) and "vary.remote" in lat
    # A message's count is the run's message count (sm sends none but the barrier's).
    for _, run in df.iterrows():
        mine = lat[(lat["point"] == run["point"]) & (lat["variant"] == run["variant"])]
        assert len(mine) > 0
        assert (mine["p50"] <= mine["p99"]).all() and (mine["p99"] <= mine["max"]).all()
    iv = commlab.read_stats(tmp_path / "py", "interval")
    nodes = commlab.read_stats(tmp_path / "py", "per-node")
    assert {"point", "variant", "start", "total.compute", "vary.remote"} <= set(iv.columns)
    for (point, variant), stretches in iv.groupby(["point", "variant"]):
        procs = nodes[(nodes["point"] == point) & (nodes["variant"] == variant)]
        assert len(procs) == 8
        for cat in ["compute", "memory_ni_wait", "message_overhead", "synchronization"]:
            over_time, over_procs = stretches[f"total.{cat}"].sum(), procs[cat].sum()
            assert abs(over_time - over_procs) <= 1e-6 * max(over_procs, 1.0), (point, variant, cat)
    with pytest.raises(commlab.InputError, match="kind="):
        commlab.read_stats(tmp_path / "py")
    with pytest.raises(commlab.InputError, match="no per-link statistics"):
        commlab.read_stats(tmp_path / "py", "per-link")
    with pytest.raises(commlab.InputError, match="names its statistics files itself"):
        commlab.sweep("em3d", vary, procs=8, params=SMALL_PARAMS, out=tmp_path / "bad", stats=["latency=x.jsonl"])


def test_a_run_records_latencies_that_count_its_messages():
    r = commlab.run("em3d", variant="mp-int", procs=8, params=SMALL_PARAMS, latencies=True)
    lat = commlab.latencies([r])
    messages = lat[lat["metric"] == "message"]
    assert "active" in set(messages["class"])
    # Every message sent in the timed region is delivered in it (active ones and the barrier's).
    assert int(messages["count"].sum()) == r["counters"]["messages"]
    assert commlab.latencies([commlab.run("em3d", variant="mp-int", procs=8, params=SMALL_PARAMS)]).empty
