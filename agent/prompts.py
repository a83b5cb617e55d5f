"""System and task prompts (the task of SPEC §2-§3 and the tools and budgets of SPEC §6, in our words).

The task prompt opens with the reminder to keep the last launch for the final validation run (an agent that
spends every launch on edits submits a program it never ran); it names the category and the permitted physical set-up,
never the events, checklist answers, truth program or parameters.
"""

from __future__ import annotations

from physcodegym.agent.budget import BudgetLimits
from physcodegym.tasks.schema import FPS, FRAMES, Task

PROMPT_VERSION = "1"

SYSTEM_PROMPT = """You are a coding agent that reconstructs physical processes in Blender 5.0.
You watch a reference video only through the observation tools, write a standalone Blender Python program
(scene.py) in your workspace, and run it with the build tools. Work by tool calls only. Keep each step small:
build a minimal runnable scene first, verify it, then refine it. Report failures honestly; never fake outputs."""


def task_prompt(task: Task, limits: BudgetLimits) -> str:
    rub = task.rubric
    lines = [
        f"REMINDER: you have at most {limits.max_launches} Blender launches (run_scene, inspect_scene and "
        f"render_preview each use one) and {limits.wall_clock_s / 3600:.1f} h. Keep the LAST launch for a final "
        "full run of your final scene.py; finalize only after that run succeeded.",
        "",
        f"Task {task.id}: {task.title}",
        f"Category: {task.category.value}" + (f" / {task.subcategory.value}" if task.subcategory else ""),
        "",
        f"Rebuild the scene of the reference video ({FRAMES // FPS} s, {FPS} fps, {FRAMES} frames) as the Blender "
        "program scene.py, so that its motion comes from simulated physics.",
        "",
        "Requirements for scene.py:",
        "- start from an empty scene (e.g. bpy.ops.wm.read_factory_settings(use_empty=True)) and build everything "
        "procedurally: geometry, materials, camera, lights;",
        "- set physical properties, initial conditions, constraints and forces; motion of the moving objects must come "
        "from the solver (rigid body, cloth, soft body, particle fluid): no keyframed or scripted trajectories, no "
        "frame-change handlers or drivers that move objects, no force fields without a counterpart in the video;",
        "- bake every simulation cache, then save the native scene as scene.blend and render 240 frames at 640x360, "
        "30 fps to frames/0001.png ... frames/0240.png, all relative to the working directory;",
        "- use BLENDER_WORKBENCH or BLENDER_EEVEE; Mantaflow liquids do not work here, use particle fluids "
        "(physics_type 'FLUID') for liquids;",
        "- do not decode media, access the network, spawn processes, import modules dynamically or read files.",
    ]
    if rub.initial_conditions:
        lines += ["", "Permitted initial conditions:"] + [f"- {x}" for x in rub.initial_conditions]
    if rub.actuation:
        lines += ["", "Permitted actuation:"] + [f"- {x}" for x in rub.actuation]
    if rub.equivalent_representations:
        lines += ["", "Accepted equivalent representations:"] + [f"- {x}" for x in rub.equivalent_representations]
    lines += [
        "",
        "Workflow: observe the video (video_info, frame_grid, get_frames, clip); write scene.py; run it "
        "(run_scene mode=bake_only is a cheaper check, render_preview shows one frame); compare with the reference; "
        "refine; call check_submission; do a final full run_scene; then call finalize. finalize is refused unless the "
        "latest full run of the current scene.py produced scene.blend and all 240 frames.",
    ]
    return "\n".join(lines)


NO_TOOL_NUDGE = (
    "Please continue by calling a tool. When your latest full run of the final scene.py succeeded, call finalize."
)
