"""Scene samples: what one pass over a baked scene's frames measured, as plain numpy arrays (no bpy).

The data every probe, rubric check, counterfactual and truth comparison reads: world matrices per object
and frame, world-space vertices of deforming meshes, particle positions with their alive masks, and the
static settings of each object. `probes.sampling.sample_scene` fills it inside Blender; `save_npz` /
`load_npz` keep it as a file (a shipped task's `truth_trajectories.npz`) so a scene is never sampled twice.
A leaf of the data layer: authoring, verification and the UI read it without importing Blender.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class SceneSamples:
    frames: np.ndarray  # (F,) int frame numbers
    fps: float
    names: list[str]  # objects with a matrix track
    matrices: np.ndarray  # (O, F, 4, 4) float64 world matrices
    verts: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (F, V, 3) float32 world-space
    particles: dict[str, np.ndarray] = field(default_factory=dict)  # "obj/psys" -> (F, P, 3) float32
    particles_alive: dict[str, np.ndarray] = field(default_factory=dict)  # "obj/psys" -> (F, P) bool
    info: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-object static settings (JSON-able)
    scene_info: dict[str, Any] = field(default_factory=dict)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def locations(self, name: str) -> np.ndarray:
        """(F, 3) world location track of one object."""
        return self.matrices[self.index(name), :, :3, 3]

    def head(self, last_frame: int) -> SceneSamples:
        """The samples up to and including `last_frame` (a shorter run of the same simulation: a branch baked
        further than one reader asks for serves it too)."""
        keep = self.frames <= last_frame
        if keep.all():
            return self
        return SceneSamples(
            frames=self.frames[keep], fps=self.fps, names=self.names, matrices=self.matrices[:, keep],
            verts={k: v[keep] for k, v in self.verts.items()},
            particles={k: v[keep] for k, v in self.particles.items()},
            particles_alive={k: v[keep] for k, v in self.particles_alive.items()},
            info=self.info, scene_info=self.scene_info)

    def save_npz(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {"frames": self.frames, "matrices": self.matrices}
        for k, v in self.verts.items():
            arrays[f"verts::{k}"] = v
        for k, v in self.particles.items():
            arrays[f"particles::{k}"] = v
            arrays[f"alive::{k}"] = self.particles_alive[k]
        meta = {"fps": self.fps, "names": self.names, "info": self.info, "scene_info": self.scene_info}
        arrays["meta_json"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)

    @classmethod
    def load_npz(cls, path: str | Path) -> SceneSamples:
        with np.load(path) as z:
            meta = json.loads(bytes(z["meta_json"]).decode())
            verts = {k.split("::", 1)[1]: z[k] for k in z.files if k.startswith("verts::")}
            parts = {k.split("::", 1)[1]: z[k] for k in z.files if k.startswith("particles::")}
            alive = {k.split("::", 1)[1]: z[k] for k in z.files if k.startswith("alive::")}
            return cls(
                frames=z["frames"],
                fps=meta["fps"],
                names=meta["names"],
                matrices=z["matrices"],
                verts=verts,
                particles=parts,
                particles_alive=alive,
                info=meta["info"],
                scene_info=meta["scene_info"],
            )
