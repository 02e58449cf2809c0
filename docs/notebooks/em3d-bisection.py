# %% [markdown]
# # EM3D against bisection bandwidth, on a Dask cluster
#
# How does each communication mechanism's EM3D time move as other traffic takes away the
# network's bisection bandwidth, and where does the fastest variant change? This notebook runs
# the sweep of `commlab experiment bisection em3d` (cross-traffic across the bisection) as Dask
# tasks, reads the results as a DataFrame and draws the runtime curves with their crossovers.
#
# It is a Python file with `# %%` cells: open it in Jupyter (with jupytext) or VS Code, or run
# it as a script (`python docs/notebooks/em3d-bisection.py`), as CI does. On a cluster, replace
# the `LocalCluster` by a client of your scheduler (see python/README.md).
#
# The sizes are small so that it runs in under a minute on two cores: 8 processors, 2000
# graph nodes, 4 iterations. For the study's figure use `PROCS = None` (the machine's 32) and
# the default EM3D parameters (`PARAMS = {}`).

# %%
import os
import tempfile

import commlab
from dask.distributed import Client, LocalCluster

MACHINE = "alewife"
PROCS = 8
PARAMS = {"nodes": 2000, "iterations": 4}
# Cross-traffic across the bisection, bytes per processor cycle: from none to most of it.
RATES = "0:8:5"
OUT = os.environ.get("COMMLAB_NOTEBOOK_OUT") or tempfile.mkdtemp(prefix="em3d-bisection-")

# %%
m = commlab.machine(MACHINE, procs=PROCS)
print(m, f"bisection {m.bisection_bytes_per_cycle:.1f} bytes per cycle")

# %% [markdown]
# ## The sweep: every (rate, variant) a Dask task
# Each result is appended to `OUT/results.jsonl` as it arrives; rerunning with `resume=True`
# after an interruption runs only what is missing.

# %%
# Workers as threads of this process (the simulator releases the GIL, so they run in parallel);
# worker processes would re-import a script that has no `if __name__ == "__main__"` guard.
local = dict(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
with LocalCluster(**local) as cluster, Client(cluster) as client:
    df = commlab.sweep(
        "em3d",
        {"cross_traffic.rate_bytes_per_cycle": RATES},
        machine=m,
        params=PARAMS,
        out=OUT,
        client=client,
        resume=True,
    )
print(f"{len(df)} runs in {OUT}")

# %% [markdown]
# ## The numbers: cycles per variant at each rate, and where the winner changes

# %%
table = df.pivot_table(index="vary.cross_traffic.rate_bytes_per_cycle", columns="variant", values="cycles", observed=True)
print(table.round(0).to_string())
crossings = commlab.plot.crossovers(df)
print(crossings.to_string(index=False) if len(crossings) else "no crossovers: one variant is fastest throughout")
assert df["check.ok"].all(), "every run's answer check passed"

# %% [markdown]
# ## The figure

# %%
fig = commlab.plot.runtime(df, title="EM3D on alewife: runtime against bisection cross-traffic")
png = os.path.join(OUT, "em3d-bisection.png")
fig.savefig(png, dpi=100)
print("figure:", png)
