"""`physcodegym export-harbor TASK OUT`: write the task as a Harbor task folder (task.toml, instruction.md,
environment/, tests/test.sh, solution/) so native coding CLIs can be run on it with Harbor."""

from __future__ import annotations

import argparse

from physcodegym.headless.cli import CommandResult

NAME = "export-harbor"
HELP = "export a task in Harbor's task format"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task", help="task id or folder")
    p.add_argument("out", help="output folder (the Harbor task directory)")
    p.add_argument("--force", action="store_true", help="replace a non-empty output folder")
    p.add_argument("--max-launches", type=int, default=20)
    p.add_argument("--agent-timeout", type=float, default=3 * 3600.0, help="seconds (default 3 h)")
    p.add_argument("--verifier-timeout", type=float, default=3600.0, help="seconds")
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--memory-mb", type=int, default=8192)
    p.add_argument(
        "--network-mode",
        default="public",
        choices=("public", "no-network"),
        help="agent phase network (native CLIs need their model API); the verifier always runs without network",
    )
    p.add_argument(
        "--image", default=None, help="prebuilt docker image to use instead of building environment/Dockerfile"
    )
    p.add_argument("--metrics", default=None, help="metrics for the verifier's score (default: all computable)")


def run(args: argparse.Namespace) -> CommandResult:
    from physcodegym.agent.harbor_export import export_harbor

    doc = export_harbor(
        args.task,
        args.out,
        force=args.force,
        max_launches=args.max_launches,
        agent_timeout_s=args.agent_timeout,
        verifier_timeout_s=args.verifier_timeout,
        cpus=args.cpus,
        memory_mb=args.memory_mb,
        network_mode=args.network_mode,
        docker_image=args.image,
        metrics=args.metrics,
    )
    return CommandResult(doc, human=f"wrote Harbor task {doc['name']} to {doc['out']} ({len(doc['files'])} files)")
