"""Scene samples: what one pass over a baked scene's frames measured, as plain numpy arrays (no bpy).

The data every probe, rubric check, counterfactual and truth comparison reads: world matrices per object
and frame, world-space vertices of deforming meshes, particle positions with their alive masks, and the
static settings of each object. `probes.scene.sampling.sample_scene` fills it inside Blender; `save_npz` /
`load_npz` keep it as a file (a shipped task's `truth_trajectories.npz`) so a scene is never sampled twice.
A leaf of the data layer: authoring, verification and the UI read it without importing Blender.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.core import atomic

__all__ = ["SceneSamples"]  # what other packages may import


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
        return self if keep.all() else self._take(keep)

    def _take(self, ix: np.ndarray) -> SceneSamples:
        """The samples on the frames `ix` selects (a mask or positions), every track cut the same way."""
        return SceneSamples(
            frames=self.frames[ix], fps=self.fps, names=self.names, matrices=self.matrices[:, ix],
            verts={k: v[ix] for k, v in self.verts.items()},
            particles={k: v[ix] for k, v in self.particles.items()},
            particles_alive={k: v[ix] for k, v in self.particles_alive.items()},
            info=self.info, scene_info=self.scene_info)

    def at(self, frames: np.ndarray | list[int]) -> SceneSamples:
        """The samples on the given frame numbers, in that order (a re-simulation that re-ran only some frames is
        compared with the bake on those frames). Every frame must be sampled here."""
        pos = {int(f): i for i, f in enumerate(self.frames)}
        missing = [int(f) for f in frames if int(f) not in pos]
        if missing:
            raise KeyError(f"frames not sampled: {missing[:5]}")
        return self._take(np.array([pos[int(f)] for f in frames], dtype=np.int64))

    @classmethod
    def concat(cls, parts: list[SceneSamples]) -> SceneSamples:
        """Samples of separate frame runs of one scene joined in frame order (the static settings are the first
        part's). The parts must track the same objects, vertices and particles."""
        parts = sorted(parts, key=lambda p: int(p.frames[0]) if len(p.frames) else 0)
        first = parts[0]
        if any(p.names != first.names or set(p.verts) != set(first.verts) or set(p.particles) != set(first.particles)
               for p in parts):
            raise ValueError("the parts track different objects")

        def cat(get: Any) -> np.ndarray:
            return np.concatenate([get(p) for p in parts], axis=0)

        return cls(
            frames=cat(lambda p: p.frames), fps=first.fps, names=first.names,
            matrices=np.concatenate([p.matrices for p in parts], axis=1),
            verts={k: cat(lambda p, k=k: p.verts[k]) for k in first.verts},
            particles={k: cat(lambda p, k=k: p.particles[k]) for k in first.particles},
            particles_alive={k: cat(lambda p, k=k: p.particles_alive[k]) for k in first.particles_alive},
            info=first.info, scene_info=first.scene_info)

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
        with atomic.replacing(path, ".npz") as tmp:
            np.savez_compressed(tmp, **arrays)

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
