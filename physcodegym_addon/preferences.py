"""Add-on preferences: task library, provider/model, API key *variable names*, preview engine.

API keys themselves are never stored (not in the preferences, not in the .blend): only the name of
the environment variable that holds them, so a saved file or a shared userpref carries no secret.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import bpy

# The add-on's module name: "physcodegym", or "bl_ext.<repo>.physcodegym" as an extension. Modules are imported
# as `physcodegym.*` (registration aliases the extension), so ask the root module for its real name.
_ROOT = __package__.rsplit(".", 1)[0]
ADDON_ID = getattr(sys.modules.get(_ROOT), "__name__", _ROOT)

PROVIDERS = [
    ("openai", "OpenAI-compatible", "Any OpenAI-compatible chat-completions endpoint"),
    ("anthropic", "Anthropic", "Anthropic messages API"),
]
ENGINES = [
    ("BLENDER_WORKBENCH", "Workbench", "Fast previews (about 0.13 s per frame at 640x360 on a CPU)"),
    ("BLENDER_EEVEE", "EEVEE", "Slower, nicer previews"),
    ("CYCLES", "Cycles", "Path traced; slowest"),
]


class PCG_AddonPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_ID

    task_library: bpy.props.StringProperty(
        name="Task library",
        subtype="DIR_PATH",
        default="",
        description="Folder of task folders (added before the shipped packs)",
    )
    runs_folder: bpy.props.StringProperty(
        name="Runs folder",
        subtype="DIR_PATH",
        default="",
        description="Where agent runs and audit copies go (default: temp)",
    )
    provider: bpy.props.EnumProperty(name="Provider", items=PROVIDERS, default="openai")
    model: bpy.props.StringProperty(name="Model", default="gpt-4o")
    base_url: bpy.props.StringProperty(name="Base URL", default="", description="Endpoint override (OpenAI-compatible)")
    openai_key_env: bpy.props.StringProperty(name="OpenAI key variable", default="OPENAI_API_KEY")
    anthropic_key_env: bpy.props.StringProperty(name="Anthropic key variable", default="ANTHROPIC_API_KEY")
    judge_model: bpy.props.StringProperty(
        name="Judge model", default="", description="Vision-language judge for S_obj/S_evt"
    )
    preview_engine: bpy.props.EnumProperty(name="Preview engine", items=ENGINES, default="BLENDER_WORKBENCH")

    def draw(self, context: Any) -> None:
        draw_preferences(self, self.layout)


def draw_preferences(prefs: Any, layout: Any) -> None:
    col = layout.column()
    col.prop(prefs, "task_library")
    col.prop(prefs, "runs_folder")
    box = col.box()
    box.label(text="Agent and judges")
    box.prop(prefs, "provider")
    box.prop(prefs, "model")
    box.prop(prefs, "base_url")
    box.prop(prefs, "judge_model")
    for attr in ("openai_key_env", "anthropic_key_env"):
        row = box.row()
        row.prop(prefs, attr)
        var = getattr(prefs, attr)
        row.label(
            text="set" if var and os.environ.get(var) else "not set",
            icon="CHECKMARK" if var and os.environ.get(var) else "ERROR",
        )
    box.label(text="Keys are read from the environment; only the variable names are saved.", icon="INFO")
    col.prop(prefs, "preview_engine")


class _Defaults:
    """Preference values when the add-on is not enabled through Blender (scripts, the bpy module)."""

    task_library = os.environ.get("PHYSCODEGYM_TASK_LIBRARY", "")
    runs_folder = ""
    provider = "openai"
    model = "gpt-4o"
    base_url = ""
    openai_key_env = "OPENAI_API_KEY"
    anthropic_key_env = "ANTHROPIC_API_KEY"
    judge_model = ""
    preview_engine = "BLENDER_WORKBENCH"


def get(context: Any = None) -> Any:
    """The add-on's preferences, or defaults when it is registered without being enabled as an add-on."""
    context = context or bpy.context
    addon = context.preferences.addons.get(ADDON_ID)
    if addon is not None and addon.preferences is not None:
        return addon.preferences
    return _Defaults()


def api_key_env(prefs: Any) -> str:
    return prefs.anthropic_key_env if prefs.provider == "anthropic" else prefs.openai_key_env
