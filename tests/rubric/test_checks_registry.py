"""The check names a task may use (tasks.schema.CHECKS) and the implementations (verifier.checks) stay in step."""

from __future__ import annotations

import inspect


def test_every_named_check_is_implemented_and_no_implementation_is_unnamed() -> None:
    from physcodegym.tasks.schema import CHECKS
    from physcodegym.verifier.checks import CHECK_FUNCS

    assert set(CHECKS) - set(CHECK_FUNCS) == set(), "named in CHECKS but not implemented"
    assert set(CHECK_FUNCS) - set(CHECKS) == set(), "implemented but not named in CHECKS"
    for name, fn in CHECK_FUNCS.items():
        params = list(inspect.signature(fn).parameters)
        assert params[:2] == ["ctx", "crit"], (name, params)


def test_every_check_function_in_the_module_is_registered() -> None:
    import physcodegym.verifier.checks as C

    defined = {n[len("check_") :] for n, f in vars(C).items() if n.startswith("check_") and inspect.isfunction(f)}
    assert defined == set(C.CHECK_FUNCS), defined ^ set(C.CHECK_FUNCS)
