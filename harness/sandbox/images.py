"""Content-addressed sandbox images, built locally from ``sandbox_images/images.yaml``.

No registry is reachable, so a base root filesystem is made with ``mmdebstrap`` and imported;
Python wheels are installed on the host for the image's interpreter (``pip --target
--platform``) and copied in; the runtime is copied from ``sandbox_images/runtime``.  Each tag
is ``galapagos/<name>:<hash>`` where the hash covers the recipe entry, the parent's tag and the
files copied in, so :func:`build_images` is idempotent and rebuilds only what changed.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
import yaml

from harness.core.errors import ConfigError, SandboxError, SandboxUnavailable
from harness.sandbox._runtime import IMAGES_DIR, RUNTIME_DIR
from harness.sandbox.folder_images import FOLDER_MARK, FolderImage, translate

__all__ = [
    "ImageRecipe",
    "build_images",
    "derived_name",
    "image_packages",
    "requirement_name",
    "image_present",
    "image_tag",
    "load_recipes",
    "missing_images",
    "stale_images",
]

#: Bump when a build procedure changes (part of the hashes of the images built that way).
BUILDER_VERSION = {"debootstrap": "1", "layer": "2"}
REPOSITORY = "galapagos"
BUILD_DIR = IMAGES_DIR / ".build"
SITE = "/opt/galapagos/site"
RUNTIME = "/opt/galapagos/runtime"
COMPAT = "/opt/galapagos/compat"
Progress = Callable[[str], None]


@dataclass(frozen=True)
class ImageRecipe:
    name: str
    parent: str | None = None
    debootstrap: dict[str, Any] | None = None
    pip: tuple[str, ...] = ()
    runtime: bool = False
    env: dict[str, str] = field(default_factory=dict)
    #: A task folder's Dockerfile, translated (:mod:`harness.sandbox.folder_images`).
    folder: FolderImage | None = None
    #: Built only when named (``galapagos sandbox build NAME``) or first used, never by a plain
    #: ``galapagos sandbox build`` (toolchain images take minutes).
    on_demand: bool = False

    def entry(self) -> dict[str, Any]:
        entry = {
            "from": self.parent,
            "debootstrap": self.debootstrap,
            "pip": list(self.pip),
            "runtime": self.runtime,
            "env": self.env,
        }
        if self.folder is not None:
            entry["folder"] = self.folder.digest()
        return entry


def load_recipes(path: Path | None = None) -> dict[str, ImageRecipe]:
    path = path or IMAGES_DIR / "images.yaml"
    raw = yaml.safe_load(path.read_text()) or {}
    recipes: dict[str, ImageRecipe] = {}
    allowed = {"from", "debootstrap", "pip", "runtime", "env", "on_demand"}
    for name, spec in raw.items():
        unknown = set(spec) - allowed
        if unknown:
            raise ConfigError(
                f"{path}: image {name!r} has unknown keys {sorted(unknown)}; "
                f"valid keys: {', '.join(sorted(allowed))}"
            )
        if bool(spec.get("from")) == bool(spec.get("debootstrap")):
            raise ConfigError(f"{path}: image {name!r} needs exactly one of 'from', 'debootstrap'")
        recipes[name] = ImageRecipe(
            name=name,
            parent=spec.get("from"),
            debootstrap=spec.get("debootstrap"),
            pip=tuple(spec.get("pip") or ()),
            runtime=bool(spec.get("runtime")),
            env={str(k): str(v) for k, v in (spec.get("env") or {}).items()},
            on_demand=bool(spec.get("on_demand")),
        )
    for recipe in recipes.values():
        if recipe.parent and recipe.parent not in recipes:
            raise ConfigError(f"{path}: image {recipe.name!r} builds on unknown {recipe.parent!r}")
    return recipes


def _runtime_files() -> list[Path]:
    return sorted(
        p
        for p in RUNTIME_DIR.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def _digest(recipe: ImageRecipe, recipes: dict[str, ImageRecipe]) -> str:
    h = hashlib.sha256()
    parent = image_tag(recipe.parent, recipes) if recipe.parent else None
    builder = BUILDER_VERSION["debootstrap" if recipe.debootstrap else "layer"]
    h.update(
        json.dumps(
            {"builder": builder, "name": recipe.name, "recipe": recipe.entry(), "parent": parent},
            sort_keys=True,
        ).encode()
    )
    if recipe.runtime:
        for path in _runtime_files():
            h.update(str(path.relative_to(RUNTIME_DIR)).encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


#: Separates a base image from extra pip requirements in a derived image's name
#: (``python-eval+sympy==1.14.0+mpmath``: a layer over ``python-eval`` with those packages).
DERIVED = "+"


def derived_name(base: str, requirements: Iterable[str]) -> str:
    """The image name of ``base`` plus pip ``requirements`` (``base`` when there are none)."""
    extra = sorted({r.strip() for r in requirements if r.strip()})
    return DERIVED.join([base, *extra]) if extra else base


def with_derived(names: Iterable[str], recipes: dict[str, ImageRecipe]) -> dict[str, ImageRecipe]:
    """``recipes`` plus a recipe for every derived name among ``names`` (see
    :func:`derived_name`): a pip layer over its base, tagged ``<base>-req-<hash>``."""
    out = dict(recipes)
    for name in names:
        if FOLDER_MARK in name and name not in out:
            out = _with_folder(name, out)
            continue
        if DERIVED not in name or name in out:
            continue
        base, *extra = name.split(DERIVED)
        if base not in recipes:
            raise ConfigError(
                f"unknown sandbox image {base!r} (in {name!r}); valid images: {', '.join(recipes)}"
            )
        digest = hashlib.sha256("\n".join(sorted(extra)).encode()).hexdigest()[:10]
        out[name] = ImageRecipe(
            name=f"{base}-req-{digest}", parent=base, pip=tuple(sorted(extra)), runtime=False
        )
    return out


def _with_folder(name: str, recipes: dict[str, ImageRecipe]) -> dict[str, ImageRecipe]:
    """``recipes`` plus the recipe of a folder image ``<base>@<folder>`` (a layer over
    ``<base>``, itself maybe derived, that carries the folder's translated Dockerfile)."""
    base, _, folder = name.partition(FOLDER_MARK)
    out = with_derived([base], recipes)
    if base not in out:
        raise ConfigError(f"unknown sandbox image {base!r} (in {name!r})")
    translated = translate(Path(folder))
    label = out[base].name
    out[name] = ImageRecipe(
        name=f"{label}-folder-{translated.digest()[:10]}", parent=base, folder=translated
    )
    return out


def image_packages(name: str, recipes: dict[str, ImageRecipe] | None = None) -> set[str]:
    """Normalised names of the pip packages in image ``name`` and its parents."""
    recipes = recipes if recipes is not None else load_recipes()
    names: set[str] = set()
    current = recipes.get(name)
    while current is not None:
        names |= {requirement_name(r) for r in current.pip}
        debian = (current.debootstrap or {}).get("include", [])
        names |= {
            requirement_name(p[len("python3-") :]) for p in debian if p.startswith("python3-")
        }
        current = recipes.get(current.parent) if current.parent else None
    return names


def requirement_name(requirement: str) -> str:
    """``SciPy>=1.11 ; python_version>'3'`` → ``scipy`` (PEP 503 normalised)."""
    head = requirement.split(";")[0].strip()
    for sep in ("[", "=", "<", ">", "!", "~", " ", "@"):
        head = head.split(sep)[0]
    return head.strip().lower().replace("_", "-").replace(".", "-")


def image_tag(name: str, recipes: dict[str, ImageRecipe] | None = None) -> str:
    """``galapagos/<name>:<hash>`` for the image called ``name`` in images.yaml (or a derived
    name, see :func:`derived_name`)."""
    recipes = with_derived([name], recipes if recipes is not None else load_recipes())
    if name not in recipes:
        raise ConfigError(f"unknown sandbox image {name!r}; valid images: {', '.join(recipes)}")
    return f"{REPOSITORY}/{recipes[name].name}:{_digest(recipes[name], recipes)}"


def image_present(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"cannot look up image {tag}: {exc}") from exc
    return True


def _chain(names: Iterable[str], recipes: dict[str, ImageRecipe]) -> list[str]:
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        parent = recipes[name].parent
        if parent:
            visit(parent)
        order.append(name)

    for name in names:
        if name not in recipes:
            raise ConfigError(f"unknown sandbox image {name!r}; valid images: {', '.join(recipes)}")
        visit(name)
    return order


def missing_images(client: docker.DockerClient, names: Iterable[str] | None = None) -> list[str]:
    """Tags (of ``names``, default all) that are not present in the engine."""
    recipes = load_recipes()
    return [
        t
        for n in _chain(names or recipes, recipes)
        if not image_present(client, t := image_tag(n, recipes))
    ]


def _labels(recipe: ImageRecipe, tag: str) -> dict[str, str]:
    return {"galapagos": "1", "galapagos.image": recipe.name, "galapagos.recipe": tag}


def _build_debootstrap(
    client: docker.DockerClient, recipe: ImageRecipe, tag: str, progress: Progress
) -> None:
    spec = recipe.debootstrap or {}
    if shutil.which("mmdebstrap") is None:
        raise SandboxUnavailable(
            "building the base image needs mmdebstrap; install it with `apt-get install mmdebstrap`"
        )
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    tarball = BUILD_DIR / f"{recipe.name}.tar"
    cmd = [
        "mmdebstrap",
        f"--variant={spec.get('variant', 'essential')}",
        f"--include={','.join(spec.get('include', []))}",
        spec.get("suite", "bookworm"),
        str(tarball),
    ]
    progress(f"{recipe.name}: {' '.join(cmd)}")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        raise SandboxError(f"mmdebstrap failed for image {recipe.name}: {done.stderr[-2000:]}")
    repo, _, version = tag.partition(":")
    changes = [f"ENV {k}={v}" for k, v in recipe.env.items()]
    changes += [f"LABEL {k}={v}" for k, v in _labels(recipe, tag).items()]
    try:
        client.api.import_image_from_file(
            str(tarball), repository=repo, tag=version, changes=changes
        )
    finally:
        tarball.unlink(missing_ok=True)


def _pip_target(recipe: ImageRecipe, site: Path, progress: Progress) -> None:
    arch = platform.machine()
    platforms = [f"manylinux_2_28_{arch}", f"manylinux_2_17_{arch}", f"manylinux2014_{arch}"]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-compile",
        "--target",
        str(site),
        "--only-binary=:all:",
        "--python-version",
        "3.11",
        "--implementation",
        "cp",
        "--abi",
        "cp311",
        *[a for p in platforms for a in ("--platform", p)],
        *recipe.pip,
    ]
    progress(f"{recipe.name}: pip install {' '.join(recipe.pip)} (for the image's CPython 3.11)")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        raise SandboxError(f"pip failed for image {recipe.name}: {done.stderr[-2000:]}")


def _dockerfile(recipe: ImageRecipe, parent_tag: str, tag: str, recipes: dict) -> str:
    compile_cmd = (
        '["/usr/bin/python3", "-m", "compileall", "-q", "-j", "0", '
        '"--invalidation-mode", "unchecked-hash", {}]'
    )
    lines = [f"FROM {parent_tag}"]
    if recipe.pip:
        lines += [f"COPY site {SITE}", "RUN " + compile_cmd.format(f'"{SITE}"')]
    if recipe.runtime:
        # Every runtime package goes on the image's path; the compat shims only on compat jobs'.
        packages = sorted(
            p.name
            for p in RUNTIME_DIR.iterdir()
            if p.is_dir() and p.name != "compat" and not p.name.startswith((".", "_"))
        )
        lines += [f"COPY runtime/{pkg} {RUNTIME}/{pkg}" for pkg in packages]
        lines += [
            f"COPY runtime/compat {COMPAT}",
            "RUN " + compile_cmd.format(f'"{RUNTIME}", "{COMPAT}"'),
        ]
    if recipe.folder is not None:
        lines += recipe.folder.steps()
    path = [RUNTIME] if _has(recipe, recipes, "runtime") else []
    path += [SITE] if _has(recipe, recipes, "pip") else []
    env = {**recipe.env, **({"PYTHONPATH": ":".join(path)} if path else {})}
    lines += [f"ENV {k}={v}" for k, v in env.items()]
    lines += [f"LABEL {k}={v}" for k, v in _labels(recipe, tag).items()]
    return "\n".join(lines) + "\n"


def _has(recipe: ImageRecipe, recipes: dict[str, ImageRecipe], what: str) -> bool:
    current: ImageRecipe | None = recipe
    while current is not None:
        if getattr(current, what):
            return True
        current = recipes.get(current.parent) if current.parent else None
    return False


def _build_layer(
    client: docker.DockerClient,
    recipe: ImageRecipe,
    tag: str,
    recipes: dict[str, ImageRecipe],
    progress: Progress,
) -> None:
    assert recipe.parent is not None
    context = BUILD_DIR / f"{recipe.name}-{tag.rsplit(':', 1)[1]}"
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    try:
        if recipe.pip:
            _pip_target(recipe, context / "site", progress)
        if recipe.runtime:
            shutil.copytree(
                RUNTIME_DIR,
                context / "runtime",
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
        if recipe.folder is not None:
            (context / "files").mkdir()
            for n, (source, _) in enumerate(recipe.folder.copies):
                shutil.copyfile(source, context / "files" / str(n))
        parent_tag = image_tag(recipe.parent, recipes)
        (context / "Dockerfile").write_text(_dockerfile(recipe, parent_tag, tag, recipes))
        progress(f"{recipe.name}: docker build {tag}")
        client.images.build(path=str(context), tag=tag, rm=True, forcerm=True, pull=False)
    except docker.errors.BuildError as exc:
        log = "".join(str(chunk.get("stream", "")) for chunk in exc.build_log)[-2000:]
        raise SandboxError(f"docker build failed for image {recipe.name}: {exc}\n{log}") from exc
    finally:
        shutil.rmtree(context, ignore_errors=True)


def build_images(
    names: Iterable[str] | None = None,
    *,
    client: docker.DockerClient | None = None,
    force: bool = False,
    progress: Progress = lambda _msg: None,
    on_demand: bool = True,
) -> dict[str, str]:
    """Build the named images (default: all but the on-demand ones) and their parents; returns
    name → tag.

    Idempotent: an image whose tag exists is skipped unless ``force``.  ``on_demand=False`` (a
    backend building what a job needs on first use) refuses to build an on-demand image (a
    toolchain image takes minutes): the error says which command builds it.
    """
    wanted = list(names) if names is not None else None
    recipes = with_derived(wanted or [], load_recipes())
    if not wanted:  # everything but the images built on demand (and their own parents)
        wanted = [
            n for n, r in recipes.items() if not r.on_demand and not _only_for_demand(n, recipes)
        ]
    client = client or docker.from_env(timeout=600)
    tags: dict[str, str] = {}
    try:
        chain = _chain(wanted or recipes, recipes)
        if not on_demand:  # before building anything (a toolchain's base takes minutes too)
            for name in chain:
                if recipes[name].on_demand and not image_present(client, image_tag(name, recipes)):
                    raise SandboxUnavailable(
                        f"sandbox image {name} is built on demand only (it takes minutes): run "
                        f"`galapagos sandbox build {name}`, then run again"
                    )
        for name in chain:
            recipe, tag = recipes[name], image_tag(name, recipes)
            tags[name] = tag
            if not force and image_present(client, tag):
                progress(f"{name}: {tag} is up to date")
                continue

            if recipe.debootstrap:
                _build_debootstrap(client, recipe, tag, progress)
            else:
                _build_layer(client, recipe, tag, recipes, progress)
            progress(f"{name}: built {tag}")
    except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"image build failed: {exc}") from exc
    return tags


def _only_for_demand(name: str, recipes: dict[str, ImageRecipe]) -> bool:
    """Whether ``name`` is a parent of on-demand images only (``r-base`` of ``r-eval``)."""
    children = [r for r in recipes.values() if r.parent == name]
    return bool(children) and all(
        r.on_demand or _only_for_demand(n, recipes) for n, r in recipes.items() if r.parent == name
    )


def stale_images(client: docker.DockerClient) -> list[str]:
    """Galapagos-built images whose tag is no longer the current recipe's (safe to delete)."""
    recipes = load_recipes()
    current = {image_tag(name, recipes) for name in recipes}
    stale = []
    for image in client.images.list(filters={"label": "galapagos.image"}):
        tags = [t for t in image.tags if t.startswith(f"{REPOSITORY}/")]
        if tags and not set(tags) & current:
            stale.extend(tags)
    return sorted(stale)
