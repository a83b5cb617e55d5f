"""Provider clients against the real loopback HTTP server: wire shapes, faults, retries, accounting, secrets."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import requests
from physcodegym.core.errors import InputError
from physcodegym.llm import errors as E
from physcodegym.llm.anthropic import AnthropicMessages
from physcodegym.llm.base import ImagePart, Message, TextPart, ToolResult, ToolSpec
from physcodegym.llm.factory import make_provider
from physcodegym.llm.openai_compat import OpenAIChat
from physcodegym.testing.loopback import LoopbackLLM, Reply

from .conftest import KEY

PNG = base64.b64encode(cv2.imencode(".png", np.full((8, 8, 3), 128, np.uint8))[1].tobytes()).decode()
TOOLS = [ToolSpec(name="get_frames", description="frames at times",
                  parameters={"type": "object", "properties": {"times": {"type": "array"}}, "required": ["times"]})]


def convo() -> list[Message]:
    return [Message(role="system", content=[TextPart(text="be brief")]),
            Message(role="user", content=[TextPart(text="look"), ImagePart(png_base64=PNG)])]


def client(kind: str, llm: LoopbackLLM, tmp_path: Path, **kw):
    common = dict(api_key=KEY, backoff_base_s=0.005, backoff_max_s=0.02, log_path=tmp_path / "llm.jsonl", seed=1)
    common.update(kw)
    if kind == "openai":
        return OpenAIChat("loop-model", base_url=llm.openai_base_url, **common)
    return AnthropicMessages("loop-model", base_url=llm.anthropic_base_url, **common)


def tool_roundtrip(c, llm: LoopbackLLM) -> list:
    """Model asks for a tool, gets a result with an image, answers: two validated requests."""
    llm.script([Reply.tool("get_frames", {"times": [0.5, 1.0]}), Reply.ok("two frames seen")])
    r1 = c.chat(convo(), tools=TOOLS, max_tokens=256, temperature=0.0)
    assert r1.tool_calls and r1.tool_calls[0].name == "get_frames" and r1.tool_calls[0].arguments == {"times": [0.5, 1.0]}
    follow = [*convo(), Message(role="assistant", content=[TextPart(text="")], tool_calls=r1.tool_calls),
              Message(role="tool", tool_results=[ToolResult(tool_call_id=r1.tool_calls[0].id,
                                                            content=[TextPart(text="2 frames"), ImagePart(png_base64=PNG)])])]
    r2 = c.chat(follow, tools=TOOLS, max_tokens=256)
    assert r2.text == "two frames seen" and not r2.tool_calls
    return llm.chat_requests


def test_openai_wire_shape_images_and_tools(llm: LoopbackLLM, tmp_path: Path) -> None:
    reqs = tool_roundtrip(client("openai", llm, tmp_path), llm)
    assert llm.validation_errors == []
    first, second = reqs[0], reqs[1]
    assert first.endpoint == "openai" and first.headers["authorization"] == f"Bearer {KEY}"
    b = first.body
    assert b["messages"][0] == {"role": "system", "content": "be brief"}
    assert b["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert b["tools"][0]["type"] == "function" and b["tools"][0]["function"]["parameters"]["required"] == ["times"]
    assert b["temperature"] == 0.0 and b["max_tokens"] == 256
    roles = [m["role"] for m in second.body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]  # tool images follow as a user message
    assert json.loads(second.body["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {"times": [0.5, 1.0]}
    assert second.images == 2


def test_anthropic_wire_shape_images_and_tools(llm: LoopbackLLM, tmp_path: Path) -> None:
    reqs = tool_roundtrip(client("anthropic", llm, tmp_path), llm)
    assert llm.validation_errors == []
    first, second = reqs[0], reqs[1]
    assert first.endpoint == "anthropic" and first.headers["x-api-key"] == KEY
    assert first.headers["anthropic-version"] == "2023-06-01" and "authorization" not in first.headers
    b = first.body
    assert b["system"] == "be brief" and [m["role"] for m in b["messages"]] == ["user"]
    assert b["messages"][0]["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    assert b["tools"][0]["input_schema"]["required"] == ["times"]
    msgs = second.body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"][0]["type"] == "tool_use"
    res = msgs[2]["content"][0]
    assert res["type"] == "tool_result" and res["tool_use_id"] == msgs[1]["content"][0]["id"]
    assert [x["type"] for x in res["content"]] == ["text", "image"]


def test_server_rejects_malformed_requests_and_client_does_not_retry(llm: LoopbackLLM, tmp_path: Path) -> None:
    # twin of the valid requests above: a tool answer with no pending call, and bytes that are not a PNG
    bad = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"GIF89a....").decode()}}]},
        {"role": "tool", "tool_call_id": "nope", "content": "x"}]}
    r = requests.post(llm.openai_base_url + "/chat/completions", json=bad, headers={"authorization": f"Bearer {KEY}"})
    assert r.status_code == 400
    errs = llm.requests[-1].errors
    assert any("not image/png" in e for e in errs) and any("answers no pending tool call" in e for e in errs)
    c = client("anthropic", llm, tmp_path)
    broken = [Message(role="user", content=[ImagePart(png_base64=base64.b64encode(b"not an image").decode())])]
    n0 = len(llm.requests)
    with pytest.raises(E.MalformedImage):
        c.chat(broken)
    assert len(llm.requests) == n0 + 1  # a 4xx is never retried


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_faults_are_retried_with_backoff_and_retry_after(kind: str, llm: LoopbackLLM, tmp_path: Path) -> None:
    llm.script([Reply.rate_limited(retry_after=0.15), Reply.server_error(503), Reply.truncated(),
                Reply.truncated(mid_stream=True), Reply.timeout(1.0), Reply.ok("finally")])
    c = client(kind, llm, tmp_path, timeout_s=0.25, max_retries=5)
    r = c.chat(convo())
    assert r.text == "finally"
    assert [q.reply for q in llm.chat_requests] == ["429", "503", "truncated:body", "truncated:stream", "delayed:1",
                                                       "text"]
    assert c.stats.retries == 5 and c.stats.calls == 1
    lines = [json.loads(x) for x in (tmp_path / "llm.jsonl").read_text().splitlines()]
    attempts = [x for x in lines if "attempt" in x]
    assert attempts[0]["retry_after_s"] == 0.15 and attempts[0]["retry_in_s"] == 0.15  # Retry-After honoured
    kinds = [a.get("error", {}).get("type") for a in attempts]
    assert kinds == ["RateLimited", "ServerError", "MalformedResponse", "ConnectionFailed", "Timeout", None]
    backoffs = [a["retry_in_s"] for a in attempts[1:5]]
    assert all(0 < d <= 0.02 for d in backoffs)  # exponential with jitter, capped by backoff_max_s


def test_retry_budget_exhausted_and_long_retry_after(llm: LoopbackLLM, tmp_path: Path) -> None:
    c = client("openai", llm, tmp_path, max_retries=2)
    llm.script([Reply.server_error(500)] * 3)
    with pytest.raises(E.ServerError):
        c.chat(convo())
    assert len(llm.chat_requests) == 3
    llm.script([Reply.rate_limited(retry_after=3600)])
    with pytest.raises(E.RateLimited) as ei:
        c.chat(convo())
    assert ei.value.retry_after_s == 3600 and len(llm.chat_requests) == 4  # not waited out, not retried


@pytest.mark.parametrize("reply,exc", [
    (Reply.http_error(401, "invalid x-api-key"), E.AuthError),
    (Reply.http_error(404, "model loop-model does not exist"), E.ModelNotFound),
    (Reply.http_error(400, "prompt is too long: 250000 tokens > 200000 maximum"), E.ContextTooLong),
    (Reply.http_error(400, "Could not process image"), E.MalformedImage),
    (Reply.http_error(422, "temperature must be a number"), E.BadRequest),
])
def test_client_errors_are_classified_and_not_retried(reply, exc, llm: LoopbackLLM, tmp_path: Path) -> None:
    llm.script([reply])
    with pytest.raises(exc):
        client("anthropic", llm, tmp_path).chat(convo())
    assert len(llm.chat_requests) == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_token_and_cost_accounting(kind: str, llm: LoopbackLLM, tmp_path: Path) -> None:
    c = client(kind, llm, tmp_path, prices={"input_per_mtok": 3.0, "output_per_mtok": 15.0})
    llm.script([Reply.ok("a", input_tokens=1000, output_tokens=200), Reply.ok("b", input_tokens=500, output_tokens=100)])
    r1 = c.chat(convo())
    r2 = c.chat(convo())
    assert (r1.usage.input_tokens, r1.usage.output_tokens) == (1000, 200)
    assert r1.usage.cost_usd == pytest.approx(1000 * 3e-6 + 200 * 15e-6)
    assert c.stats.input_tokens == 1500 and c.stats.output_tokens == 300
    assert c.stats.cost_usd == pytest.approx(r1.usage.cost_usd + r2.usage.cost_usd)
    usage_lines = [json.loads(x) for x in (tmp_path / "llm.jsonl").read_text().splitlines() if '"usage"' in x]
    assert [u["usage"]["input_tokens"] for u in usage_lines if "attempt" not in u] == [1000, 500]


def test_no_secret_in_any_log_line(llm: LoopbackLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("PHYSCODEGYM_CONFIG", str(tmp_path / "none.toml"))
    log = tmp_path / "secret.jsonl"
    for name, url in (("openai", llm.openai_base_url), ("anthropic", llm.anthropic_base_url)):
        c = make_provider(name, "loop-model", base_url=url, log_path=log, backoff_base_s=0.001)
        llm.script([Reply.server_error(500, f"upstream rejected key {KEY}"), Reply.ok(f"your key is {KEY}")])
        assert c.chat(convo()).text == "your key is ***"  # scrubbed before it reaches traces or the log
        llm.script([Reply.http_error(401, f"invalid key {KEY}")])
        with pytest.raises(E.AuthError) as ei:
            c.chat(convo())
        assert KEY not in str(ei.value)
    text = log.read_text()
    assert len(text.splitlines()) >= 8 and KEY not in text and KEY[:12] not in text
    assert '"authorization": "***"' in text and '"x-api-key": "***"' in text
    assert PNG not in text or len(PNG) < 512  # small images stay, big ones become a sha256 placeholder


def test_factory_keys_config_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    monkeypatch.setenv("PHYSCODEGYM_CONFIG", str(cfg))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(InputError) as ei:
        make_provider("openai", "gpt-x")
    assert ei.value.field == "OPENAI_API_KEY" and "OPENAI_API_KEY" in str(ei.value)
    with pytest.raises(InputError):
        make_provider("gemini", "x")
    local = make_provider("openai", "llama3", base_url="http://localhost:11434/v1")  # Ollama: no key needed
    assert local.base_url == "http://localhost:11434/v1"
    cfg.write_text('[providers.anthropic]\napi_key = "sk-from-file"\ntimeout_s = 7\n'
                   '[prices."claude-x"]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n')
    p = make_provider("anthropic", "claude-x")
    assert p._api_key == "sk-from-file" and p.transport.timeout_s == 7 and p.prices.output_per_mtok == 15.0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    assert make_provider("anthropic", "claude-x")._api_key == "sk-from-env"  # the environment wins
    cfg.write_text("[providers.openai\n")
    with pytest.raises(InputError) as ei:
        make_provider("openai", "m")
    assert ei.value.file == str(cfg)


def test_doctor_reports_configured_and_reachable(llm: LoopbackLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capfd: pytest.CaptureFixture) -> None:
    from physcodegym.headless.cli import main

    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[providers.openai]\nbase_url = "{llm.openai_base_url}"\napi_key_env = "LOOP_KEY"\n'
                   f'[providers.anthropic]\nbase_url = "{llm.anthropic_base_url}"\n')
    monkeypatch.setenv("PHYSCODEGYM_CONFIG", str(cfg))
    monkeypatch.setenv("LOOP_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["doctor", "--json"]) == 0
    out = capfd.readouterr().out
    doc = json.loads(out)
    prov = {p["provider"]: p for p in doc["providers"]}
    assert prov["openai"]["configured"] and prov["openai"]["reachable"] and prov["openai"]["key_accepted"]
    assert prov["openai"]["key_source"] == "env:LOOP_KEY" and prov["openai"]["models"] == 2
    # anthropic's base URL is local too (so "configured" without a key), and the server refuses the missing key
    assert prov["anthropic"]["reachable"] and prov["anthropic"]["key_accepted"] is False
    assert KEY not in out and doc["ok"] is True
    monkeypatch.setenv("LOOP_KEY", "sk-wrong-key")
    assert main(["doctor", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert doc["providers"][0]["key_accepted"] is False and "sk-wrong-key" not in json.dumps(doc)


def test_backoff_schedule_and_retry_after_parsing() -> None:
    import email.utils
    import random
    import time

    from physcodegym.llm.transport import RetryPolicy, parse_retry_after

    pol = RetryPolicy(base_s=0.1, max_s=0.5)
    rng = random.Random(0)
    for k, cap in enumerate([0.1, 0.2, 0.4, 0.5, 0.5]):
        d = pol.delay(k, rng)
        assert 0.5 * cap <= d <= cap  # exponential, jittered, capped
    assert parse_retry_after("2") == 2.0 and parse_retry_after("0.25") == 0.25
    assert 8 <= parse_retry_after(email.utils.formatdate(time.time() + 10, usegmt=True)) <= 10.5
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_server_validates_anthropic_turns(llm: LoopbackLLM) -> None:
    h = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    good = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    llm.script([Reply.ok("ok")])
    assert requests.post(llm.anthropic_base_url + "/v1/messages", json=good, headers=h).status_code == 200
    bad = {"model": "m", "messages": [
        {"role": "system", "content": "sys"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "assistant", "content": [{"type": "text", "text": ""}]}]}
    r = requests.post(llm.anthropic_base_url + "/v1/messages", json=bad, headers={"x-api-key": KEY})
    assert r.status_code == 400 and r.json()["type"] == "error"
    errs = "\n".join(llm.requests[-1].errors)
    for needle in ("anthropic-version", "max_tokens", "top-level field", "first message", "alternate",
                   "never answered", "non-empty"):
        assert needle in errs, needle
    assert len(llm.validation_errors) == len(llm.requests[-1].errors)  # the good request recorded none
