"""Build a provider client from a name, a model and the user's configuration.

API keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, or the variable named by
`api_key_env`) or from the config file, never from command-line arguments (they would land in shell history
and `ps`). Config file: $PHYSCODEGYM_CONFIG, else $XDG_CONFIG_HOME/physcodegym/config.toml, else
~/.config/physcodegym/config.toml:

    [providers.openai]
    base_url = "https://openrouter.ai/api/v1"   # any OpenAI-compatible endpoint
    api_key_env = "OPENROUTER_API_KEY"          # or: api_key = "..." (keep the file chmod 600)
    timeout_s = 120
    max_retries = 4

    [providers.anthropic]
    api_key_env = "ANTHROPIC_API_KEY"

    [prices."gpt-4o"]                           # USD per million tokens, used for cost accounting
    input_per_mtok = 2.5
    output_per_mtok = 10.0

A local OpenAI-compatible server (base URL on localhost: Ollama, vLLM) needs no key.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from physcodegym.core.errors import InputError
from physcodegym.llm.base import Provider

PROVIDERS = ("openai", "anthropic")
DEFAULTS: dict[str, dict[str, str]] = {
    "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY", "base_url_env": "OPENAI_BASE_URL"},
    "anthropic": {"base_url": "https://api.anthropic.com", "api_key_env": "ANTHROPIC_API_KEY",
                  "base_url_env": "ANTHROPIC_BASE_URL"},
}
_CLIENT_KEYS = {"timeout_s", "max_retries", "backoff_base_s", "backoff_max_s", "max_retry_after_s", "log_path",
                "max_tokens_field", "anthropic_version", "extra_headers", "seed", "prices"}


def config_path() -> Path:
    if os.environ.get("PHYSCODEGYM_CONFIG"):
        return Path(os.environ["PHYSCODEGYM_CONFIG"]).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "physcodegym" / "config.toml"


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The parsed config file, {} when it does not exist; a syntax error is an InputError naming the file."""
    p = path or config_path()
    if not p.is_file():
        return {}
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"cannot parse config: {e}", file=str(p)) from e


def _is_local(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return host in {"localhost", "127.0.0.1", "::1"} or host.endswith(".localhost")


def resolve(provider: str, base_url: str | None = None, cfg: dict | None = None) -> dict[str, Any]:
    """Where the key and base URL come from, without exposing the key (for `doctor` and error messages)."""
    prov = provider.lower().strip()
    if prov not in PROVIDERS:
        raise InputError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}", field="provider")
    cfg = load_config() if cfg is None else cfg
    pcfg = dict((cfg.get("providers") or {}).get(prov) or {})
    d = DEFAULTS[prov]
    key_env = pcfg.get("api_key_env") or d["api_key_env"]
    key, source = None, None
    if os.environ.get(key_env):
        key, source = os.environ[key_env], f"env:{key_env}"
    elif pcfg.get("api_key"):
        key, source = str(pcfg["api_key"]), f"config:{config_path()}"
    url = base_url or os.environ.get(d["base_url_env"]) or pcfg.get("base_url") or d["base_url"]
    return {"provider": prov, "api_key": key, "key_source": source, "api_key_env": key_env, "base_url": url,
            "local": _is_local(url), "config": pcfg}


def make_provider(provider: str, model: str, base_url: str | None = None, **kw: Any) -> Provider:
    """A configured client; InputError (exit 2) when no key is configured, naming the variable to set."""
    if not model:
        raise InputError("a model name is required", field="model")
    cfg = load_config()
    r = resolve(provider, base_url, cfg)
    key = kw.pop("api_key", None) or r["api_key"]
    if not key and not r["local"]:
        raise InputError(
            f"no API key for provider {r['provider']!r}: set the environment variable {r['api_key_env']} "
            f"or add api_key to [providers.{r['provider']}] in {config_path()}",
            field=r["api_key_env"],
        )
    opts = {k: v for k, v in r["config"].items() if k in _CLIENT_KEYS}
    prices = (cfg.get("prices") or {}).get(model)
    if prices is not None:
        opts["prices"] = prices
    opts.update(kw)
    if r["provider"] == "openai":
        from physcodegym.llm.openai_compat import OpenAIChat

        return OpenAIChat(model, base_url=r["base_url"], api_key_env=None, api_key=key or "", **opts)
    from physcodegym.llm.anthropic import AnthropicMessages

    return AnthropicMessages(model, base_url=r["base_url"], api_key_env=None, api_key=key or "", **opts)
