"""Evidence a person can read: one sentence per rubric criterion (what was measured, the threshold, the
verdict) and the audit findings grouped by kind. The raw numbers stay available, folded, in the page."""

from __future__ import annotations

from typing import Any

CHECK_TEXT = {
    "moves_by_simulation": "whether the roles move and their motion comes from a solver",
    "no_scripted_motion": "whether keyframes, drivers, constraints or handlers prescribe the roles' motion",
    "supported_by": "what the roles rest on (the support role's visible material, not a hidden collider)",
    "contacts": "whether the roles come into material contact with the other role",
    "no_interpenetration": "how deep the roles' solid material overlaps",
    "energy_non_increasing": "whether the roles' passive mechanical energy ever rises",
    "pinned": "whether the pinned cloth vertices stay fixed",
    "responds_to": "whether the roles' motion depends on the named field (counterfactual)",
    "stays_within": "whether particles or bodies stay inside the container",
    "no_self_intersection": "whether cloth or soft-body material crosses itself",
    "numerically_stable": "NaN, explosions and jitter at rest",
    "collider_matches_mesh": "how far the collision shape departs from the visible mesh",
    "audit_clean": "which audit findings concern the roles",
    "counterfactual": "the response of a re-simulated copy with one intervention, against the expected response",
}

KIND_TEXT = {
    "scripted_motion": "Scripted motion: a moving core object is driven by keyframes, drivers, path constraints, "
                       "an animated/kinematic rigid body or a frame-change handler",
    "unexplained_force_field": "Unexplained force field: a field steers objects with no counterpart in the video",
    "interpenetration": "Interpenetration: two solid bodies' materials overlap",
    "hidden_support": "Hidden support: an object is held by a collider that does not render, or by no material",
    "collider_mismatch": "Collider mismatch: a collision shape extends beyond (or falls far inside) the visible mesh",
    "energy_gain": "Energy gain: passive mechanical energy rises with no admitted work source",
    "no_contact_response": "No contact response: a rendered solid has no collision owner, bodies pass through it",
    "self_intersection": "Self-intersection: cloth or soft-body material crosses itself",
    "numerical_instability": "Numerical instability: NaN, explosion or jitter at rest",
    "not_simulated": "Not simulated: the core motion has no simulation at all",
    "stale_cache": "Stale cache: the bake is not what the saved scene simulates (changed after baking): re-bake it",
}

UNITS = (("_mps", "m/s"), ("_m_s", "m/s"), ("_mm", "mm"), ("_m", "m"), ("_s", "s"), ("_j", "J"), ("_deg", "°"),
         ("_rad", "rad"), ("_kg", "kg"), ("_pct", "%"), ("_frames", "frames"))
THRESHOLD_WORDS = ("threshold", "tolerance", "tol", "limit", "allowed", "expected", "bound")


def _unit(key: str) -> str:
    k = key.lower()
    for suf, u in UNITS:
        if k.endswith(suf):
            return u
    return ""


def _num(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def _leaves(x: Any, path: tuple[str, ...] = (), depth: int = 0) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = []
    if depth > 4:
        return out
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("series", "frames_list", "samples"):
                continue
            out += _leaves(v, (*path, str(k)), depth + 1)
    elif isinstance(x, bool | int | float) and not isinstance(x, str):
        out.append((path, x))
    elif isinstance(x, str) and len(x) <= 60 and path:
        out.append((path, x))
    return out


def _label(path: tuple[str, ...]) -> str:
    key = path[-1]
    for suf, _u in UNITS:
        if key.lower().endswith(suf) and len(key) > len(suf):
            key = key[: -len(suf)]
            break
    words = key.replace("_", " ")
    return (" · ".join(path[:-1]) + " " if len(path) > 1 else "") + words


def measured_and_thresholds(evidence: Any, limit: int = 5) -> tuple[list[str], list[str]]:
    meas, thr = [], []
    for path, v in _leaves(evidence):
        txt = (f"{_label(path)} "
               f"{_num(v)}{(' ' + _unit(path[-1])) if _unit(path[-1]) and not isinstance(v, bool | str) else ''}")
        (thr if any(w in path[-1].lower() for w in THRESHOLD_WORDS) else meas).append(txt)
    more = len(meas) - limit
    meas = meas[:limit] + ([f"and {more} more value(s)"] if more > 0 else [])
    return meas, thr[:4]


def verdict(res: dict) -> tuple[str, str]:
    p = res.get("passed")
    if p is True:
        return "pass", "passed"
    if p is False:
        return "fail", "failed"
    return "undet", "undetermined"


def criterion_sentence(res: dict, spec: Any | None) -> str:
    """'<description>: measured <what> (<values>); threshold <t>; passed (score 1.00, weight 2).'"""
    check = res.get("check") or (spec.check if spec is not None else "?")
    desc = (spec.description if spec is not None else None) or res.get("description") or res.get("id", "criterion")
    what = CHECK_TEXT.get(check, check.replace("_", " "))
    meas, thr = measured_and_thresholds(res.get("evidence"))
    cf = _counterfactual_words(res.get("evidence"))
    if cf is not None:
        meas, thr = cf
    if spec is not None:
        thr = [f"{k.replace('_', ' ')} {_num(v)}" for k, v in spec.thresholds.items()] + thr
        thr += [f"{k.replace('_', ' ')} {_num(v)}" for k, v in spec.params.items() if isinstance(v, int | float)
                and not isinstance(v, bool)]
        if spec.counterfactual is not None:
            cf = spec.counterfactual
            exp = getattr(cf, "expected", None)
            kind = getattr(cf.intervention.kind, "value", cf.intervention.kind)
            thr.append(f"intervention {kind} on {', '.join(cf.intervention.roles) or 'the scene'}"
                       + (f", expected {_expected(exp)}" if exp is not None and cf is None else ""))
    _, word = verdict(res)
    s = f"{desc[0].upper() + desc[1:] if desc else ''}. Measured {what}"
    s += f": {'; '.join(meas)}" if meas else ""
    s += f". Threshold: {'; '.join(thr)}" if thr else ". Threshold: the check's own (no task-specific value)"
    sc = res.get("score")
    s += f". Verdict: {word}" + (
        f" (score {sc:.2f}, weight {res.get('weight', spec.weight if spec else '?')})" if isinstance(sc, int | float)
        else "")
    if res.get("reason"):
        s += f" — {res['reason']}"
    if res.get("structural") and res.get("passed") is False:
        s += ("; structural, so S_val is capped at "
              f"{res.get('cap') if res.get('cap') is not None else 'the rubric default'}")
    return s + "."


def _expected(exp: Any) -> str:
    try:
        d = exp.model_dump() if hasattr(exp, "model_dump") else dict(exp)
    except (TypeError, ValueError):
        return str(exp)
    return ", ".join(f"{k} {getattr(v, 'value', v)}" for k, v in d.items() if v not in (None, [], {}))


def group_findings(findings: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in findings:
        out.setdefault(str(f.get("kind")), []).append(f)
    return dict(sorted(out.items()))


def frames_text(frames: list, fps: float = 30.0) -> str:
    if not frames:
        return "no frames"
    a, b = frames[0], frames[-1]
    if len(frames) == 1 or a == b:
        return f"frame {a} ({(a - 1) / fps:.2f} s)"
    return (f"frames {a}–{b} ({(a - 1) / fps:.2f}–{(b - 1) / fps:.2f} "
            f"s{', ' + str(len(frames)) + ' listed' if len(frames) > 2 else ''})")


OPS = {"lt": "<", "le": "≤", "gt": ">", "ge": "≥", "eq": "=", "ne": "≠"}


def _counterfactual_words(ev: Any) -> tuple[list[str], list[str]] | None:
    """A counterfactual's evidence in words: did the intervention take effect, what the intervened copy measured,
    how far each role moved from its baseline; the expectation as the threshold. None if not that shape."""
    if not isinstance(ev, dict) or not isinstance(ev.get("verdict"), dict):
        return None
    v = ev["verdict"]
    meas: list[str] = []
    te = ev.get("took_effect")
    if te is not None:
        how = ((ev.get("took_effect_evidence") or {}).get("measured")
               if isinstance(ev.get("took_effect_evidence"), dict) else None)
        meas.append(f"the intervention took effect: {_num(bool(te))}" + (f" ({how})" if how else ""))
    iv = v.get("intervened")
    if isinstance(iv, dict) and iv.get("value") is not None:
        meas.append(f"{str(v.get('measure', 'value')).replace('_', ' ')} of {v.get('role', '?')} in the intervened "
                    f"copy {_num(iv['value'])}{(' ' + iv['unit']) if iv.get('unit') else ''}"
                    + (f" (frame {iv['frame']})" if iv.get("frame") is not None else ""))
    for role, t in (ev.get("trajectories") or {}).items():
        if isinstance(t, dict) and t.get("max_deviation_m") is not None:
            meas.append(f"{role} deviates from its baseline by up to {_num(t['max_deviation_m'])} m")
    thr = []
    if v.get("expected") is not None:
        at = f" at {_num(v['at_s'])} s" if v.get("at_s") is not None else ""
        thr.append(f"expected {str(v.get('measure', 'value')).replace('_', ' ')} of {v.get('role', '?')}{at} "
                   f"{OPS.get(str(v.get('op')), v.get('op', ''))} {_num(v['expected'])}")
    return meas[:5], thr
