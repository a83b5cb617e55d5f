"""The re-bake worker: `python -m physcodegym.probes.rebake.cf_worker`, the child that re-opens a
saved scene and runs one job per branch (an intervention, a defect, a re-simulation, the solvers-off
re-evaluation). Nothing imports it: it is started by name through `core.launch`.
"""

__all__ = ["cf_worker"]  # the modules others may import
