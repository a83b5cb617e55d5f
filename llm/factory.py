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

The configuration is never read from a place a scene program can write (docs/SPEC.md §3): the file
must be a regular file owned by this user (or root), not writable by group or others, in a folder
others cannot write, and not inside a run folder; and once this process has started a scene program
(`freeze_config()`, called by the sandbox runner before each child), the configuration is the
snapshot taken then: a file that changes afterwards is not read again by this process. Keys are
never passed to a scene program's environment (the runner builds that environment from nothing).
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
    "openai": {
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "OPENAI_API_KEY",
        "base_url_env": "OPENAI_BASE_URL",
    },
    "anthropic": {
        "base_url": "https://api.anthropic.com",
        "api_key_env": "ANTHROPIC_API_KEY",
        "base_url_env": "ANTHROPIC_BASE_URL",
    },
}
_CLIENT_KEYS = {
    "timeout_s",
    "max_retries",
    "backoff_base_s",
    "backoff_max_s",
    "max_retry_after_s",
    "log_path",
    "max_tokens_field",
    "anthropic_version",
    "extra_headers",
    "seed",
    "prices",
}


def config_path() -> Path:
    if os.environ.get("PHYSCODEGYM_CONFIG"):
        return Path(os.environ["PHYSCODEGYM_CONFIG"]).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "physcodegym" / "config.toml"


_FROZEN: dict[
    str, dict[str, Any] | InputError
] = {}  # resolved config path -> snapshot taken when the first program ran


def _unsafe_reason(p: Path) -> str | None:
    """Why `p` is a place a program (or another user) could have written, or None if it is safe to read."""
    try:
        real = p.resolve(strict=True)
        st = os.stat(real)
    except OSError as e:
        return f"cannot stat it: {e}"
    import stat as _stat

    if not _stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        return f"it is owned by uid {st.st_uid}, not by this user"
    if st.st_mode & 0o022:
        return "it is writable by group or others (chmod 600 it)"
    for d in real.parents:
        try:
            dst = os.stat(d)
        except OSError:
            continue
        if dst.st_mode & 0o002 and not dst.st_mode & _stat.S_ISVTX:
            return f"its folder {d} is writable by others"
        if (d / "run.json").is_file() or (d.name == "sandbox" and (d.parent / "run.json").is_file()):
            return f"it lies inside a run folder ({d}), where a scene program writes"
    return None


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The parsed config file, {} when it does not exist; a syntax error or an unsafe place is an InputError."""
    p = path or config_path()
    key = str(p.expanduser().absolute())
    if key in _FROZEN:
        snap = _FROZEN[key]
        if isinstance(snap, InputError):
            raise snap
        return snap
    if not p.is_file():
        return {}
    why = _unsafe_reason(p)
    if why:
        raise InputError(f"refusing to read the provider configuration: {why}", file=str(p))
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"cannot parse config: {e}", file=str(p)) from e


def freeze_config() -> None:
    """Snapshot the configuration now (before a scene program runs); this process never re-reads the file."""
    p = config_path()
    key = str(p.expanduser().absolute())
    if key in _FROZEN:
        return
    try:
        _FROZEN[key] = load_config(p)
    except InputError as e:
        _FROZEN[key] = e  # an unsafe or broken file stays refused for the rest of this process


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
    return {
        "provider": prov,
        "api_key": key,
        "key_source": source,
        "api_key_env": key_env,
        "base_url": url,
        "local": _is_local(url),
        "config": pcfg,
    }


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
