"""Build hook: a wheel carries the shipped tasks and sandbox image recipes (with the
in-container runtime) as ``harness/_shipped/``; the metadata lives in pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("tasks", "sandbox_images")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".build", "*.egg-info")


class BuildWithShippedData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's folders
        target = Path(self.build_lib) / "harness" / "_shipped"
        for name in SHIPPED:
            shutil.rmtree(target / name, ignore_errors=True)
            shutil.copytree(Path(__file__).parent / name, target / name, ignore=IGNORE)


setup(cmdclass={"build_py": BuildWithShippedData})
