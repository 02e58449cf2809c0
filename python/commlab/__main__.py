"""`python -m commlab sweep ...` (also installed as `commlab-dask`): `commlab sweep` with its
runs on a Dask cluster (`--scheduler tcp://host:8786`) or on this machine's threads.

Arguments are those of `commlab sweep` (see `commlab sweep --help`); the results file, summary,
printed summary, messages and exit status (0; 1 for a failed run or check; 2 for bad input)
are the same, so either can resume the other's sweep.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Optional, Sequence

EPILOG = """examples:
  python -m commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:9 --scheduler tcp://head:8786
  python -m commlab sweep em3d --procs 8 --vary nodes=320,640,1280 --vary remote=0.1,0.5 --out em3d-grid --jobs 2
  python -m commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:9 --scheduler tcp://head:8786 --resume

On a Slurm cluster, start the scheduler and workers with dask-jobqueue (see python/README.md)
and give the scheduler's address."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m commlab",
        description="commlab sweeps on a Dask cluster: `commlab sweep` with every (point, variant) a Dask task.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "sweep",
        help="run an application over a grid of machine keys and app parameters",
        description="As `commlab sweep` (its --help explains KEY=SPEC), with --scheduler to run on Dask.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("app", help="application name (see `commlab apps`)")
    s.add_argument("--vary", action="append", required=True, metavar="KEY=SPEC",
                   help="a key and its values: a:b:steps, a:b:steps:log or v1,v2,... (repeatable: a grid)")
    s.add_argument("--variant", default="all", help="variant to run, or `all` (default)")
    s.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="app parameter for every point")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="machine key for every point")
    s.add_argument("--machine", default="alewife", help="preset name or machine TOML file (default alewife)")
    s.add_argument("--procs", type=int, help="resize the machine to N processors")
    s.add_argument("--seed", type=int, default=1, help="seed of every pseudo-random choice (default 1)")
    s.add_argument("--jobs", type=int, default=1, help="runs at once on this machine's threads (without --scheduler)")
    s.add_argument("--out", metavar="DIR", help="directory of results.jsonl and summary.json (default sweep-APP)")
    s.add_argument("--resume", action="store_true", help="skip the (point, variant) runs already in DIR")
    s.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://head:8786")
    s.add_argument("--stats", action="append", default=[], metavar="KIND",
                   help="keep every run's per-node, per-link, latency or interval=CYCLES rows in DIR/stats/KIND/ (repeatable)")
    return p


def _split(pairs: Sequence[str], flag: str) -> list:
    for kv in pairs:
        if "=" not in kv:
            raise SystemExit(f"commlab: {flag} `{kv}` is not KEY=VALUE")
    return list(pairs)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    import commlab
    from . import _native, _sweep

    out = args.out or f"sweep-{args.app}"
    common = (args.app, _split(args.vary, "--vary"), args.variant, _split(args.param, "--param"),
              _split(args.set, "--set"), args.machine, args.procs, args.seed)
    try:
        if args.jobs < 1:
            raise commlab.InputError(f"--jobs {args.jobs}: give a whole number >= 1")
        if args.scheduler:
            line, text, problems = _sweep._distributed(common, out, args.resume, None, args.scheduler, True, args.stats)
        else:
            line, text, problems = _native.sweep(*common, args.jobs, out, args.resume, True, args.stats)
    except commlab.CommlabError as e:
        print(f"commlab: {e}", file=sys.stderr)
        return 2 if isinstance(e, commlab.InputError) else 1
    print(line)
    print(text, end="")
    if problems:
        print(f"commlab: {len(problems)} runs failed: {'; '.join(problems)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    warnings.simplefilter("default")
    sys.exit(main())
