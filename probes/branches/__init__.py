"""Copies of the saved scene re-simulated in a child (branches): counterfactual interventions and
how a branch is started and read back (`counterfactual`), the unchanged re-simulation and its comparison with the
bake (`resimulation`), the solvers-off re-evaluation that says who owns a motion (`ownership`).
"""

__all__ = ["counterfactual", "interventions", "ownership", "resimulation"]  # the modules others may import
