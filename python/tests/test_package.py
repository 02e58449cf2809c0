"""commlab from Python against the command line: runs, machines, apps, errors, DataFrames
and results files."""

from __future__ import annotations

import json
import warnings

import pytest

import commlab
from conftest import SMALL_ARGS, SMALL_PARAMS, cli, cli_error, without_wall_clock


def test_one_run_is_the_command_lines_record():
    r = commlab.run("em3d", variant="sm", procs=8, params=SMALL_PARAMS)
    line = cli("run", "em3d", "--variant", "sm", *SMALL_ARGS, "--json").stdout
    assert without_wall_clock(r.to_dict()) == without_wall_clock(json.loads(line))
    assert r["cycles"] == r.cycles > 0 and r.ok and r.variant == "sm"


def test_the_default_run_prints_the_clis_cycles():
    # The README's example: the default em3d on the default machine.
    r = commlab.run("em3d", variant="sm")
    assert r["cycles"] == json.loads(cli("run", "em3d", "--variant", "sm", "--json").stdout)["cycles"]


def test_all_variants_in_variant_order_whatever_the_jobs():
    one = commlab.run("em3d", procs=8, params=SMALL_PARAMS, jobs=1)
    two = commlab.run("em3d", procs=8, params=SMALL_PARAMS, jobs=2)
    lines = cli("run", "em3d", *SMALL_ARGS, "--json").stdout.splitlines()
    want = [without_wall_clock(json.loads(x)) for x in lines]
    assert [without_wall_clock(r.to_dict()) for r in one] == want
    assert [without_wall_clock(r.to_dict()) for r in two] == want
    # The variants the default machine (Alewife: coherence in hardware) runs: all but the
    # Blizzard study's pair (`stache` would repeat `sm`; `custom` needs Tempest).
    em3d = next(a["variants"] for a in commlab.apps() if a["name"] == "em3d")
    assert em3d[-2:] == ["stache", "custom"]
    assert [r.variant for r in one] == em3d[:-2]


def test_machine_keys_read_set_and_checked_as_set_is():
    m = commlab.machine("alewife")
    assert m["network.router_latency_ns"] == json.loads(cli("machine", "show", "alewife", "--json").stdout)["spec"][
        "network"
    ]["router_latency_ns"]
    m["network.router_latency_ns"] = 80
    assert m["network.router_latency_ns"] == 80
    assert m.sets == ["network.router_latency_ns=80"]
    shown = json.loads(cli("machine", "show", "alewife", "--set", "network.router_latency_ns=80", "--json").stdout)
    assert m.fingerprint == shown["fingerprint"]
    assert "network.router_latency_ns" in m.keys()
    # Same run as the command line with --set.
    r = commlab.run("em3d", machine=m, variant="sm", procs=8, params=SMALL_PARAMS)
    line = cli(
        "run", "em3d", "--variant", "sm", *SMALL_ARGS, "--set", "network.router_latency_ns=80", "--json"
    ).stdout
    assert without_wall_clock(r.to_dict()) == without_wall_clock(json.loads(line))
    # A bad value leaves the machine as it was.
    with pytest.raises(commlab.InputError) as e:
        m["network.router_latency_ns"] = -5
    assert str(e.value) == cli_error("machine", "show", "alewife", "--set", "network.router_latency_ns=-5")
    assert m["network.router_latency_ns"] == 80
    with pytest.raises(KeyError, match="no_such_key"):
        m["network.no_such_key"]


@pytest.mark.parametrize(
    "call, args",
    [
        (lambda: commlab.run("no-such-app"), ["run", "no-such-app"]),
        (lambda: commlab.run("em3d", variant="nope"), ["run", "em3d", "--variant", "nope"]),
        (lambda: commlab.run("em3d", params={"nodes": "many"}), ["run", "em3d", "--param", "nodes=many"]),
        (lambda: commlab.run("em3d", sets=["network.bogus=1"]), ["run", "em3d", "--set", "network.bogus=1"]),
        (lambda: commlab.machine("no-such-machine"), ["machine", "show", "no-such-machine"]),
        (lambda: commlab.machine("/nonexistent/m.toml"), ["machine", "show", "/nonexistent/m.toml"]),
    ],
)
def test_bad_input_raises_input_error_with_the_clis_message(call, args):
    with pytest.raises(commlab.InputError) as e:
        call()
    assert str(e.value) == cli_error(*args)
    assert isinstance(e.value, commlab.CommlabError)


def test_a_failed_run_raises_run_error_with_the_clis_message():
    # A limit on simulated events stops the run: the command line's exit status 1.
    args = ["--set", "limits.max_events=1000"]
    with pytest.raises(commlab.RunError) as e:
        commlab.run("em3d", variant="sm", procs=8, params=SMALL_PARAMS, sets=args[1:])
    assert str(e.value) == cli_error("run", "em3d", "--variant", "sm", *SMALL_ARGS, *args)


def test_apps_and_machines_are_the_clis():
    lines = cli("apps", "--json").stdout.splitlines()
    assert commlab.apps() == [json.loads(x) for x in lines]
    assert commlab.machines() == [x.split()[0] for x in cli("machines").stdout.splitlines()[1:]]


def test_frame_columns_are_the_records_flattened():
    df = commlab.runs_to_frame(commlab.run("em3d", procs=8, params=SMALL_PARAMS))
    for col in ["cycles", "variant", "breakdown.compute", "volume_bytes.data", "check.ok", "params.nodes", "sim.events"]:
        assert col in df.columns, col
    assert any(c.startswith("counters.") for c in df.columns)
    assert list(df["variant"].cat.categories) == list(df["variant"])
    # Categories sum to the breakdown's total, row by row.
    cats = [c for c in df.columns if c.startswith("breakdown.")]
    assert (df[cats].sum(axis=1) > 0).all()


def test_read_results_round_trip_and_a_torn_last_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    cli("run", "em3d", *SMALL_ARGS, "--json", "--out", str(path))
    records = commlab.read_records(str(path))
    df = commlab.read_results(str(path))
    assert len(records) == len(df) == 5
    assert list(df["cycles"]) == [r["cycles"] for r in records]
    # A run cut off while it was written: its line is left out, as --resume leaves it out.
    text = path.read_text()
    path.write_text(text + text.splitlines()[0][:40])
    assert len(commlab.read_records(str(path))) == 5
    # A damaged line in the middle is an error naming it.
    lines = text.splitlines()
    lines[2] = lines[2][:30]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(commlab.InputError, match="line 3"):
        commlab.read_records(str(path))
    with pytest.raises(commlab.InputError, match="cannot read"):
        commlab.read_records(str(tmp_path / "missing.jsonl"))


def test_a_failed_check_warns_and_keeps_the_result(monkeypatch):
    # No app fails its check on purpose; the warning path is exercised on a record as the
    # simulator would return it.
    from commlab import _native, _run

    real = _native.run

    def failing(*a, **k):
        lines = real(*a, **k)
        rec = json.loads(lines[0])
        rec["check"] = {"ok": False, "detail": "made to fail", "max_error": 1.0}
        return [json.dumps(rec) + "\n"]

    monkeypatch.setattr(_run._native, "run", failing)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = commlab.run("em3d", variant="sm", procs=8, params=SMALL_PARAMS)
    assert not r.ok
    assert any(issubclass(x.category, commlab.CheckFailedWarning) and "made to fail" in str(x.message) for x in w)


def test_help_teaches():
    doc = commlab.run.__doc__
    assert "Example" in doc and "InputError" in doc and "variant" in doc
    assert "client" in commlab.sweep.__doc__ and "resume" in commlab.sweep.__doc__
