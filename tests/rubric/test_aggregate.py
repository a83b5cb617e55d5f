"""Pure aggregation rules: weighted mean, structural caps, undetermined criteria left out."""

from physcodegym.tasks.schema import Aggregation
from physcodegym.verifier.rubric import aggregate


def c(id_: str, passed: bool | None, weight: float = 1.0, structural: bool = False, cap: float | None = None, score: float | None = None) -> dict:
    return {"id": id_, "passed": passed, "weight": weight, "structural": structural, "cap": cap, "score": (1.0 if passed else 0.0) if score is None else score}


def test_weighted_mean_without_structural_failure() -> None:
    s, ex = aggregate([c("a", True, 3), c("b", False, 1)], Aggregation())
    assert s == 0.75 and ex["caps"] == [] and ex["failed"] == ["b"]


def test_failed_structural_caps_at_default_half() -> None:
    s, ex = aggregate([c("a", True, 9), c("b", False, 1, structural=True)], Aggregation())
    assert s == 0.5 and ex["weighted_mean"] == 0.9 and ex["caps"] == [{"criterion": "b", "cap": 0.5}]


def test_cap_never_raises_a_lower_mean_and_criterion_cap_wins() -> None:
    s, _ = aggregate([c("a", False, 3), c("b", False, 1, structural=True)], Aggregation())
    assert s == 0.0
    s, _ = aggregate([c("a", True, 9), c("b", False, 1, structural=True, cap=0.2)], Aggregation(default_cap=0.5))
    assert s == 0.2


def test_undetermined_left_out_and_all_undetermined_is_missing() -> None:
    s, ex = aggregate([c("a", True), c("b", None, 5)], Aggregation())
    assert s == 1.0 and ex["undetermined"] == ["b"]
    s, ex = aggregate([c("a", None)], Aggregation())
    assert s is None and "no criterion" in ex["reason"]


def test_partial_scores_enter_the_mean() -> None:
    s, _ = aggregate([c("a", True, 1, score=1.0), c("b", True, 1, score=0.5)], Aggregation())
    assert s == 0.75


def test_every_validity_finding_is_charged_and_says_what_it_cost() -> None:
    from physcodegym.verifier.rubric import charge_findings

    crit = [c("a", True), c("b", True)]
    s, ex = aggregate(crit, Aggregation())
    assert s == 1.0
    f = [{"kind": "non_physical_parameter", "objects": ["Ball"], "message": "gravity 0.25 g"}, {"kind": "interpenetration", "objects": ["A", "B"], "message": "overlap"}]
    s2, ex2 = charge_findings(s, ex, f, crit, Aggregation())
    assert s2 == 0.5 and ex2["S_val_before_findings"] == 1.0
    rows = {r["kind"]: r for r in ex2["finding_charges"]}
    assert rows["non_physical_parameter"]["cap"] == 0.5 and rows["non_physical_parameter"]["cost"] == 0.5 and rows["non_physical_parameter"]["binding"]
    assert rows["interpenetration"]["cap"] == 0.7 and not rows["interpenetration"]["binding"]
    # a rubric may set its own caps; findings alone decide when no criterion could be evaluated
    s3, _ = charge_findings(None, {}, f[1:], [], Aggregation(finding_caps={"interpenetration": 0.3}))
    assert s3 == 0.3
    s4, ex4 = charge_findings(1.0, {}, [], crit, Aggregation())
    assert s4 == 1.0 and ex4["finding_charges"] == []


def test_undetermined_criteria_say_why() -> None:
    row = c("b", None)
    row["reason"] = "no saved native scene"
    _, ex = aggregate([c("a", True), row], Aggregation())
    assert ex["undetermined_reasons"] == {"b": "no saved native scene"}
