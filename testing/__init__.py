"""Test support that users and tests share: the loopback LLM server and the small defect scenes.

Not part of the product's scoring path: `loopback` is a scripted HTTP server on 127.0.0.1 speaking the
providers' wire formats (tests and demos of the agent and the judges), `demo_scenes` builds defect scenes
and their valid twins in bpy (tests and benchmarks of the probes).
"""
