"""S_obj and S_evt against the loopback judge: verdict parsing, re-asks, unjudged items, majority, key cap, cache."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from physcodegym.judges.event_judge import judge_events, majority
from physcodegym.judges.object_judge import judge_objects
from physcodegym.llm.anthropic import AnthropicMessages
from physcodegym.llm.openai_compat import OpenAIChat
from physcodegym.metrics.results import MetricState
from physcodegym.testing.loopback import LoopbackLLM, RecordedRequest, Reply

from .conftest import KEY, ItemScript, evt_answer, item_of, obj_answer


def judge(kind: str, llm: LoopbackLLM, tmp_path: Path):
    kw = dict(api_key=KEY, backoff_base_s=0.001, max_retries=1, log_path=tmp_path / "judge.jsonl")
    if kind == "openai":
        return OpenAIChat("loopback-judge", base_url=llm.openai_base_url, **kw)
    return AnthropicMessages("loopback-judge", base_url=llm.anthropic_base_url, **kw)


def decoded_images(req: RecordedRequest) -> list[np.ndarray]:
    out = []

    def walk(x):
        if isinstance(x, dict):
            if x.get("type") == "image_url":
                out.append(x["image_url"]["url"].split(",", 1)[1])
            elif x.get("type") == "image":
                out.append(x["source"]["data"])
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(req.body)
    return [cv2.cvtColor(cv2.imdecode(np.frombuffer(base64.b64decode(b), np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
            for b in out]


def test_majority_rule() -> None:
    assert majority(["pass", "pass", "fail"], 3) == "pass"
    assert majority(["pass", "fail", "fail"], 3) == "fail"
    assert majority(["pass", None, None], 3) is None
    assert majority(["pass", "fail", None], 3) is None
    assert majority(["pass", "pass", None], 3) == "pass"


def test_object_judge_items_malformed_refused_unjudged(task, cand_frames, llm: LoopbackLLM, tmp_path: Path) -> None:
    s = ItemScript()
    s.add("obj_ball", Reply.refuse(), "```json\n" + obj_answer("obj_ball") + "\n```")  # refusal, then a fenced answer
    s.add("obj_block", obj_answer("obj_block", ok=True, layout=None, verdict="fail"),  # inconsistent: re-asked
          obj_answer("obj_block", ok=False, layout=None))
    s.add("obj_floor", "It looks like a floor to me.", '{"item_id": "obj_floor", "verdict": "pass"',
          obj_answer("obj_floor", layout=True))  # not JSON, truncated JSON, layout given for a no-layout item
    llm.respond_with(s)
    res = judge_objects(task, cand_frames, judge("openai", llm, tmp_path), cache_dir=tmp_path / "cache")
    assert llm.validation_errors == []
    assert res.state == MetricState.ok and res.value == pytest.approx(0.5)  # 1 pass of 2 judged
    d = res.details
    by = {r["id"]: r for r in d["items"]}
    assert by["obj_ball"]["verdict"] == "pass" and [a["outcome"] for a in by["obj_ball"]["attempts"]] == ["refused", "ok"]
    assert by["obj_block"]["verdict"] == "fail" and by["obj_block"]["observed_count"] == 2
    assert by["obj_floor"]["verdict"] is None and [u["id"] for u in d["unjudged"]] == ["obj_floor"]
    assert "partial: 1 of 3" in res.reason and d["judged"] == 2 and d["passed"] == 1
    reqs = llm.chat_requests
    assert len(reqs) == 7 and s.calls["obj_floor"] == 3  # bounded: 3 answers per item at most
    first = reqs[0]
    assert first.images == 6 and "Category: ball" in first.text() and "left of the block" in first.text()
    retry = reqs[1].body["messages"]
    assert retry[-2]["role"] == "assistant" and "declined" in retry[-1]["content"][0]["text"]
    assert d["usage"]["calls"] == 7 and d["usage"]["input_tokens"] > 0


def test_object_judge_cache_and_missing_judge(task, cand_frames, llm: LoopbackLLM, tmp_path: Path) -> None:
    s = ItemScript()
    for item in ("obj_ball", "obj_block", "obj_floor"):
        s.add(item, obj_answer(item, layout=True if item == "obj_ball" else None))
    llm.respond_with(s)
    p = judge("anthropic", llm, tmp_path)
    r1 = judge_objects(task, cand_frames, p, cache_dir=tmp_path / "cache")
    assert r1.value == 1.0 and len(llm.chat_requests) == 3 and llm.validation_errors == []
    r2 = judge_objects(task, cand_frames, p, cache_dir=tmp_path / "cache")
    assert r2.value == 1.0 and len(llm.chat_requests) == 3 and r2.details["usage"]["cache_hits"] == 3
    other = cand_frames.copy()
    other[:, :40] = 0  # a different candidate is a different input hash: asked again (and the script is empty now)
    r3 = judge_objects(task, other, p, cache_dir=tmp_path / "cache", max_attempts=1)
    assert len(llm.chat_requests) > 3 and r3.state == MetricState.error and r3.value is None
    none = judge_objects(task, cand_frames, None)
    assert none.state == MetricState.uncomputable and none.value is None and "--judge-provider" in none.reason


def test_fatal_provider_error_makes_metric_error(task, ref_frames, cand_frames, llm: LoopbackLLM, tmp_path: Path) -> None:
    llm.respond_with(lambda req: Reply.http_error(401, "invalid x-api-key"))
    res = judge_events(task, ref_frames, cand_frames, judge("anthropic", llm, tmp_path), cache_dir=tmp_path / "c")
    assert res.state == MetricState.error and res.value is None and "AuthError" not in res.reason
    assert "invalid x-api-key" in res.reason and len(llm.chat_requests) == 1


def _event_script(roll, hit, push) -> ItemScript:
    s = ItemScript()
    for item, verdicts in (("ev_roll", roll), ("ev_hit", hit), ("ev_push", push)):
        s.add(item, *[evt_answer(item, v) if v in ("pass", "fail") else v for v in verdicts])
    return s


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_event_judge_majority_weights_and_evidence(kind, task, ref_frames, cand_frames, llm: LoopbackLLM,
                                                   tmp_path: Path) -> None:
    # ev_roll 2-of-3 pass (w=1) -> pass; ev_hit 1-of-3 pass (w=2) -> fail; ev_push (key, w=1) 3-of-3 pass
    llm.respond_with(_event_script(["pass", "fail", "pass"], ["pass", "fail", "fail"], ["pass", "pass", "pass"]))
    res = judge_events(task, ref_frames, cand_frames, judge(kind, llm, tmp_path), cache_dir=tmp_path / "c")
    assert llm.validation_errors == []
    assert res.state == MetricState.ok and res.value == pytest.approx(2 / 4) and res.reason is None
    by = {r["id"]: r for r in res.details["items"]}
    assert by["ev_roll"]["verdicts"] == ["pass", "fail", "pass"] and by["ev_roll"]["majority"] == "pass"
    assert by["ev_hit"]["verdicts"] == ["pass", "fail", "fail"] and by["ev_hit"]["majority"] == "fail"
    assert by["ev_roll"]["evidence"] == [{"start_s": 0.2, "end_s": 0.8}] * 2  # from the two agreeing judgments
    assert all(len(r["judgments"]) == 3 for r in res.details["items"]) and not res.details["key_cap_applied"]
    reqs = llm.chat_requests
    assert len(reqs) == 9 and {item_of(r) for r in reqs} == {"ev_roll", "ev_hit", "ev_push"}


def test_event_judge_sees_no_reference_action(task, ref_frames, cand_frames, llm: LoopbackLLM, tmp_path: Path) -> None:
    llm.respond_with(_event_script(["pass"] * 3, ["pass"] * 3, ["pass"] * 3))
    res = judge_events(task, ref_frames, cand_frames, judge("openai", llm, tmp_path), cache_dir=tmp_path / "c")
    assert res.value == 1.0
    hit = next(r for r in llm.chat_requests if item_of(r) == "ev_hit")
    text = hit.text()
    assert "the ball hits the block" in text and "Must happen after: ev_roll: the red ball rolls" in text
    assert "red ball" in text and "blue block" in text  # role identities
    for leak in ("0.913", "1.077", "SECRET-EVIDENCE-NOTE", "start_s\": 0.9"):
        assert leak not in text
    imgs = decoded_images(hit)
    # 2 role stills (ball, block) + 8 main candidate frames + 1 contact sheet (48 frames at 3 fps = 5 thumbnails)
    assert len(imgs) == 11 and imgs[0].shape[1] > 640  # still = marked first frame + zoomed crop
    green = [(im == (0, 255, 0)).all(axis=-1).sum() for im in imgs]
    assert sum(green) == 0  # no pixel of the reference after its first frame reached the judge
    assert hit.body["messages"][1]["content"][0]["text"].startswith("Reference still for role ball")


def test_event_key_item_caps_at_zero(task, ref_frames, cand_frames, llm: LoopbackLLM, tmp_path: Path) -> None:
    llm.respond_with(_event_script(["pass"] * 3, ["pass"] * 3, ["fail", "pass", "fail"]))
    res = judge_events(task, ref_frames, cand_frames, judge("anthropic", llm, tmp_path), cache_dir=tmp_path / "c")
    assert res.state == MetricState.ok and res.value == 0.0
    assert res.details["key_cap_applied"] and res.details["failed_key_items"] == ["ev_push"]
    assert res.details["weighted_pass"] == pytest.approx(3 / 4)  # what it would have been without the cap
    assert "ev_push" in res.reason


def test_event_unjudged_items(task, ref_frames, cand_frames, llm: LoopbackLLM, tmp_path: Path) -> None:
    bad = "no JSON here"
    nopass = evt_answer("ev_roll", "pass", evidence=())  # a pass without cited interval is not a valid verdict
    # ev_roll: [pass, fail, unjudged] -> no majority -> unjudged (non-key): partial score over the judged items
    llm.respond_with(_event_script(["pass", "fail", nopass, bad, bad], ["fail"] * 3, ["pass"] * 3))
    res = judge_events(task, ref_frames, cand_frames, judge("openai", llm, tmp_path), cache_dir=tmp_path / "c")
    assert res.state == MetricState.ok and res.value == pytest.approx(1 / 3)  # push (w1) of hit (w2) + push
    assert [u["id"] for u in res.details["unjudged"]] == ["ev_roll"] and "partial" in res.reason
    roll = res.details["items"][0]
    assert roll["verdicts"] == ["pass", "fail", None] and roll["majority"] is None
    assert "a pass must cite" in roll["judgments"][2]["attempts"][0]["error"]
    # a key item without majority: the cap cannot be decided -> error, never a number
    llm.respond_with(_event_script(["pass"] * 3, ["pass"] * 3, ["pass", bad, bad, bad, "fail"]))
    res2 = judge_events(task, ref_frames, cand_frames, judge("openai", llm, tmp_path), cache_dir=tmp_path / "c2")
    assert res2.state == MetricState.error and res2.value is None and "ev_push" in res2.reason
    assert res2.details["items"][2]["verdicts"] == ["pass", None, "fail"]


def test_event_cache_keeps_three_independent_judgments(task, ref_frames, cand_frames, llm: LoopbackLLM,
                                                       tmp_path: Path) -> None:
    llm.respond_with(_event_script(["pass", "fail", "pass"], ["fail"] * 3, ["pass"] * 3))
    p = judge("openai", llm, tmp_path)
    r1 = judge_events(task, ref_frames, cand_frames, p, cache_dir=tmp_path / "c")
    n = len(llm.chat_requests)
    r2 = judge_events(task, ref_frames, cand_frames, p, cache_dir=tmp_path / "c")
    assert len(llm.chat_requests) == n == 9 and r2.details["usage"]["cache_hits"] == 9
    assert [i["verdicts"] for i in r2.details["items"]] == [i["verdicts"] for i in r1.details["items"]]
    assert json.dumps(r2.model_dump(mode="json"))  # the result is plain JSON for score output


@pytest.mark.parametrize("verdict,expected", [("pass", 1.0), ("fail", 0.0)])
def test_builtin_judge_responder_drives_both_judges(verdict, expected, task, ref_frames, cand_frames,
                                                    llm: LoopbackLLM, tmp_path: Path) -> None:
    from physcodegym.testing.loopback import judge_responder

    llm.respond_with(judge_responder(verdict))
    p = judge("anthropic", llm, tmp_path)
    obj = judge_objects(task, cand_frames, p, cache_dir=tmp_path / "c")
    evt = judge_events(task, ref_frames, cand_frames, p, cache_dir=tmp_path / "c")
    assert (obj.value, evt.value) == (expected, expected) and llm.validation_errors == []
    assert evt.details["key_cap_applied"] is (verdict == "fail")
