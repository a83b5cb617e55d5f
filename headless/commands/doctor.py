"""`physcodegym doctor`: what is installed and which LLM providers are configured and reachable.

Reachability is tested with a GET on the provider's model list (no tokens spent). A provider counts as
configured when a key is found (environment or config file) or its base URL is local (Ollama, vLLM). Keys are
never printed: only where they came from.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import platform

import requests
from physcodegym.headless.cli import CommandResult
from physcodegym.llm.factory import PROVIDERS, config_path, load_config, make_provider, resolve

NAME = "doctor"
HELP = "report installed components and which LLM providers are configured and reachable"

_PACKAGES = ("numpy", "opencv-python-headless", "scikit-image", "pydantic", "requests", "rich", "bpy", "lpips", "torch")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-network", action="store_true", help="do not contact the providers")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds per reachability check (default 5)")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_provider(name: str, cfg: dict, network: bool, timeout: float) -> dict:
    r = resolve(name, None, cfg)
    row = {
        "provider": name,
        "configured": bool(r["api_key"]) or r["local"],
        "key_source": r["key_source"],
        "api_key_env": r["api_key_env"],
        "base_url": r["base_url"],
        "reachable": None,
        "status": None,
        "key_accepted": None,
        "models": None,
        "detail": "",
    }
    if not row["configured"]:
        row["detail"] = f"no key: set {r['api_key_env']} or add api_key to [providers.{name}] in {config_path()}"
        return row
    if not network:
        row["detail"] = "not checked (--no-network)"
        return row
    client = make_provider(name, "doctor-check", max_retries=0, timeout_s=timeout)
    url, headers = client.list_models_request()
    try:
        resp = requests.get(url, headers=headers, timeout=timeout)
    except requests.RequestException as e:
        row.update(reachable=False, detail=f"{type(e).__name__}: {str(e)[:200]}")
        return row
    row.update(reachable=True, status=resp.status_code, key_accepted=resp.status_code not in (401, 403))
    if resp.ok:
        try:
            row["models"] = len(resp.json().get("data") or [])
        except ValueError:
            pass
        row["detail"] = "ok"
    else:
        row["detail"] = f"HTTP {resp.status_code}: {resp.text[:200]}"
        if r["api_key"]:
            row["detail"] = row["detail"].replace(r["api_key"], "***")
    return row


def run(args: argparse.Namespace) -> CommandResult:
    cfg = load_config()
    providers = [check_provider(p, cfg, not args.no_network, args.timeout) for p in PROVIDERS]
    packages = {d: _version(d) for d in _PACKAGES}
    doc = {
        "ok": any(p["configured"] and p["reachable"] is not False for p in providers),
        "python": platform.python_version(),
        "packages": packages,
        "bpy_importable": importlib.util.find_spec("bpy") is not None,
        "lpips_available": importlib.util.find_spec("lpips") is not None
        and importlib.util.find_spec("torch") is not None,
        "config": {"path": str(config_path()), "exists": config_path().is_file()},
        "providers": providers,
    }
    lines = [
        f"python {doc['python']}; bpy {'yes' if doc['bpy_importable'] else 'no'}; "
        f"lpips {'yes' if doc['lpips_available'] else 'no'}; config {doc['config']['path']}"
        f" ({'found' if doc['config']['exists'] else 'absent'})"
    ]
    for p in providers:
        state = (
            "not configured"
            if not p["configured"]
            else ("configured" if p["reachable"] is None else "reachable" if p["reachable"] else "UNREACHABLE")
        )
        lines.append(f"{p['provider']:<10} {state:<15} {p['base_url']}  key: {p['key_source'] or '-'}  {p['detail']}")
    return CommandResult(doc, human="\n".join(lines))
