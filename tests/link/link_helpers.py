"""Build a project from small inline files through the real pipeline."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path


def project_of(tmp_path: Path, files: dict[str, str], **settings):
    from mlcost_lint.config import Settings
    from mlcost_lint.pipeline import LintOptions, lint

    root = tmp_path / "p"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    s = Settings(root=tmp_path)
    for k, v in settings.items():
        setattr(s, k, v)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = lint(["p"], s, LintOptions(use_cache=False, jobs=1))
    finally:
        os.chdir(old)
    assert result.project.links.errors == []
    return result.project


def job(command: list[str] | None = None, args: list[str] | None = None, gpus: int | str = 8, kind: str = "Job",
        extra_spec: str = "", extra_container: str = "", image: str = "ghcr.io/acme/train:1") -> str:
    """A batch/v1 Job with one container; command/args as JSON lists."""
    import json

    lines = [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        "  name: train",
        "spec:",
        "  template:",
        "    spec:",
    ]
    lines += ["      " + l for l in textwrap.dedent(extra_spec).strip("\n").splitlines()] if extra_spec else []
    lines += [
        "      containers:",
        "        - name: main",
        f"          image: {image}",
    ]
    if command is not None:
        lines.append(f"          command: {json.dumps(command)}")
    if args is not None:
        lines.append(f"          args: {json.dumps(args)}")
    lines += ["          " + l for l in textwrap.dedent(extra_container).strip("\n").splitlines()] if extra_container else []
    lines += [
        "          resources:",
        "            limits:",
        f"              nvidia.com/gpu: {gpus}",
    ]
    return "\n".join(lines) + "\n"
