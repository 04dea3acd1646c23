"""Image recipes: content-addressed tags, idempotent builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.core.errors import ConfigError
from harness.sandbox import images


def test_tags_are_stable_and_name_the_image() -> None:
    tag = images.image_tag("python-eval")
    assert tag == images.image_tag("python-eval")
    assert tag.startswith("galapagos/python-eval:") and len(tag.rsplit(":", 1)[1]) == 16


def test_a_runtime_change_changes_the_evaluation_tag_but_not_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {n: images.image_tag(n) for n in ("base", "scientific", "python-eval")}
    runtime = tmp_path / "runtime"
    shutil.copytree(images.RUNTIME_DIR, runtime, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(images, "RUNTIME_DIR", runtime)
    assert {n: images.image_tag(n) for n in before} == before  # same content, same tags
    (runtime / "galapagos_sandbox" / "wire.py").write_text("# changed\n", encoding="utf-8")
    after = {n: images.image_tag(n) for n in before}
    assert after["python-eval"] != before["python-eval"]
    assert after["base"] == before["base"] and after["scientific"] == before["scientific"]


def test_unknown_images_list_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="python-eval"):
        images.image_tag("nope")


def test_recipes_reject_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text("base:\n  debootstrap: {suite: bookworm}\n  colour: red\n")
    with pytest.raises(ConfigError, match="colour"):
        images.load_recipes(path)


@pytest.mark.docker
def test_building_twice_builds_nothing_the_second_time(sandbox_images: dict[str, str]) -> None:
    messages: list[str] = []
    tags = images.build_images(["python-eval"], progress=messages.append)
    assert tags == {n: images.image_tag(n) for n in ("base", "scientific", "python-eval")}
    assert messages and all("up to date" in m for m in messages)
