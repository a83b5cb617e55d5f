"""Isolated execution of a submitted program: the static policy (`policy`), the runner (`runner`), the
validated run-folder artifacts (`artifacts`) and the operating-system wall around every child that opens a submitted
scene (`wall`, built on `isolation`). The bootstrap, the barrier and the media audit run inside children only.
"""

__all__ = ["artifacts", "isolation", "policy", "runner", "wall"]  # the modules other packages may import
