"""Images built from a task folder's own ``Dockerfile`` (SkyDiscover's containerised evaluator
format: ``evaluator/`` with ``Dockerfile`` and ``evaluate.sh``), under Galapagos' image rules.

No registry is reachable and nothing runs with the network, so a folder's Dockerfile is not run
as written; it is *translated* into a layer over a locally built image:

- ``FROM python:<version>[-variant]`` maps to ``python-eval`` (the locally built Debian image with
  CPython 3.11, numpy and scipy; ``python`` is linked to ``python3``).  Any other base is refused.
- ``RUN pip install …`` (``-r FILE`` or package names) becomes a pip layer installed from the
  host (packages the base lacks only); ``RUN chmod …`` and ``RUN mkdir …`` run as written.  Any
  other ``RUN`` is refused: it would need the network, or run the folder's code at build time.
- ``COPY``/``ADD`` of the folder's own files, ``WORKDIR`` and ``ENV`` apply as written
  (``ADD`` of a URL is refused).  ``ENTRYPOINT``/``CMD``/``USER``/``EXPOSE``/``LABEL``/``ARG``
  are read and do not apply: the sandbox runs ``evaluate.sh`` itself, as its unprivileged user.

A refused instruction is a :class:`~harness.core.errors.TaskError` naming the Dockerfile, line and
why, when the task is loaded.  The image name is ``<base>@<folder>`` (``python-eval@/abs/path``,
or a derived base ``python-eval+sympy@/abs/path``); its tag hashes the translated steps and the
copied files' contents, so it is rebuilt only when they change (built on first use, or by
``galapagos sandbox build`` with the name).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from harness.core.errors import TaskError

__all__ = ["FOLDER_MARK", "FolderImage", "translate"]

#: Builds the one-line error about the current instruction.
Refuse = Callable[[str], TaskError]

#: Separates the base image from the folder in a folder image's name.
FOLDER_MARK = "@"
_PYTHON_BASE = re.compile(r"(?:docker\.io/)?(?:library/)?python:(\d+(?:\.\d+)*)?[\w.-]*")
_IGNORED = {"ENTRYPOINT", "CMD", "USER", "EXPOSE", "LABEL", "ARG", "SHELL", "STOPSIGNAL",
            "HEALTHCHECK", "VOLUME", "MAINTAINER", "ONBUILD"}  # fmt: skip
_PIP = re.compile(r"^(?:python3?(?:\.\d+)? -m )?pip3? install\b")


@dataclass(frozen=True)
class FolderImage:
    """A folder's Dockerfile, translated (see the module docstring)."""

    folder: Path
    #: The base's Python version the Dockerfile asks for (``3.12``), if it says.
    python: str | None
    workdir: str = "/"
    #: (file of the folder, absolute path in the image), in Dockerfile order.
    copies: tuple[tuple[Path, str], ...] = ()
    #: pip requirements of ``RUN pip install`` lines.
    requirements: tuple[str, ...] = ()
    #: ``chmod``/``mkdir`` commands, each run with ``WORKDIR`` as the directory.
    commands: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: Instructions read that do not apply here (``ENTRYPOINT ["./evaluate.sh"]`` …).
    unused: tuple[str, ...] = field(default=())

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(repr((self.workdir, self.commands, self.env, self.requirements)).encode())
        for source, target in self.copies:
            h.update(f"{target}\0".encode() + source.read_bytes())
        return h.hexdigest()[:12]

    def steps(self) -> list[str]:
        """The Dockerfile lines of the layer over the base (after ``FROM``); the copied files
        sit in the build context under ``files/<n>``."""
        lines = ["RUN ln -sf /usr/bin/python3 /usr/local/bin/python"]
        lines += [f"ENV {k}={json_quote(v)}" for k, v in self.env]
        lines.append(f"RUN mkdir -p {shlex.quote(self.workdir)}")
        for n, (_, target) in enumerate(self.copies):
            lines.append(f"COPY files/{n} {target}")
        for cwd, command in self.commands:
            lines.append(f"RUN cd {shlex.quote(cwd)} && {command}")
        # The candidate's unprivileged user reads the evaluator's files and runs its scripts.
        lines.append(f"RUN chmod -R a+rX {shlex.quote(self.workdir)}")
        lines.append(f"WORKDIR {self.workdir}")
        return lines


def json_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Instructions with their first line number: comments dropped, ``\\`` continuations
    joined."""
    out: list[tuple[int, str]] = []
    current, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if not current:
            start = number
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        out.append((start, current.strip()))
        current = ""
    if current.strip():
        out.append((start, current.strip()))
    return out


def translate(folder: Path) -> FolderImage:
    """Read ``folder/Dockerfile`` under Galapagos' image rules (module docstring)."""
    dockerfile = folder / "Dockerfile"

    def refuse(line: int, why: str) -> TaskError:
        return TaskError(f"{dockerfile} at line {line}: {why}")

    python: str | None = None
    seen_from = False
    workdir = "/"
    copies: list[tuple[Path, str]] = []
    requirements: list[str] = []
    commands: list[tuple[str, str]] = []
    env: list[tuple[str, str]] = []
    unused: list[str] = []
    for number, text in _logical_lines(dockerfile.read_text()):
        keyword, _, rest = text.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            if seen_from:
                raise refuse(number, "a multi-stage build is not supported; keep one FROM")
            image = rest.split()[0] if rest else ""
            match = _PYTHON_BASE.fullmatch(image)
            if match is None:
                raise refuse(
                    number,
                    f"FROM {image}: no registry is reachable here and only python:* bases map "
                    "to a locally built image (python-eval); base the evaluator on python:3.x",
                )
            python, seen_from = match.group(1), True
        elif not seen_from:
            raise refuse(number, f"{keyword} before FROM")
        elif keyword == "WORKDIR":
            workdir = _absolute(workdir, rest)
        elif keyword in ("COPY", "ADD"):
            copies += _copies(folder, workdir, keyword, rest, partial(refuse, number))
        elif keyword == "RUN":
            for command in _commands(rest):
                if _PIP.match(command):
                    requirements += _pip(folder, workdir, command, partial(refuse, number))
                elif command.split()[0] in ("chmod", "mkdir"):
                    commands.append((workdir, command))
                else:
                    raise refuse(
                        number,
                        f"RUN {command}: Galapagos builds images without the network and does "
                        "not run a folder's commands at build time (only pip install, with "
                        "packages from the host, chmod and mkdir are translated); put what it "
                        "installs into an image of its own (docs/sandbox.md)",
                    )
        elif keyword == "ENV":
            env += _env(rest, partial(refuse, number))
        elif keyword in _IGNORED:
            unused.append(text)
        else:
            raise refuse(number, f"{keyword}: not a Dockerfile instruction Galapagos translates")
    if not seen_from:
        raise TaskError(f"{dockerfile}: no FROM line")
    return FolderImage(
        folder=folder,
        python=python,
        workdir=workdir,
        copies=tuple(copies),
        requirements=tuple(dict.fromkeys(requirements)),
        commands=tuple(commands),
        env=tuple(env),
        unused=tuple(unused),
    )


def _absolute(workdir: str, path: str) -> str:
    joined = path if path.startswith("/") else f"{workdir.rstrip('/')}/{path}"
    parts: list[str] = []
    for part in joined.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


def _copies(
    folder: Path,
    workdir: str,
    keyword: str,
    rest: str,
    refuse: Refuse,
) -> list[tuple[Path, str]]:
    words = [w for w in shlex.split(rest) if not w.startswith("--")]
    if rest.startswith("["):
        raise refuse(f"{keyword} in JSON form is not supported; write {keyword} SRC DEST")
    if len(words) < 2:
        raise refuse(f"{keyword} needs a source and a destination")
    *sources, dest = words
    into_dir = dest.endswith("/") or dest in (".", "./") or len(sources) > 1
    target = _absolute(workdir, dest)
    out: list[tuple[Path, str]] = []
    root = folder.resolve()
    for source in sources:
        if "://" in source:
            raise refuse(f"{keyword} {source}: downloads are not possible without the network")
        path = (folder / source).resolve()
        if not path.is_relative_to(root):
            raise refuse(f"{keyword} {source}: outside the evaluator's folder")
        if not path.exists():
            raise refuse(f"{keyword} {source}: no such file in {folder}")
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            if path.is_file():
                name = f"{target}/{file.name}" if into_dir else target
            else:
                name = f"{target}/{file.relative_to(path).as_posix()}"
            out.append((file, _absolute("/", name)))
    return out


def _commands(text: str) -> list[str]:
    if text.startswith("["):  # exec form: one command
        return [" ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text))]
    return [part.strip() for part in re.split(r"&&|;", text) if part.strip()]


def _pip(folder: Path, workdir: str, command: str, refuse: Refuse) -> list[str]:
    words = shlex.split(_PIP.sub("", command))
    out: list[str] = []
    take_file = False
    for word in words:
        if take_file:
            out += _requirements_file(folder, workdir, word, refuse)
            take_file = False
        elif word in ("-r", "--requirement"):
            take_file = True
        elif word.startswith("-"):
            continue  # --no-cache-dir, --upgrade …: what the host's pip does anyway
        else:
            out.append(word)
    return out


def _requirements_file(folder: Path, workdir: str, name: str, refuse: Refuse) -> list[str]:
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.is_file():
        raise refuse(f"pip install -r {name}: no such file in {folder}")
    out = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-") or "://" in line:
            continue
        out.append(line)
    return out


def _env(rest: str, refuse: Refuse) -> list[tuple[str, str]]:
    words = shlex.split(rest)
    if words and "=" not in words[0]:
        return [(words[0], " ".join(words[1:]))]
    out = []
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise refuse(f"ENV {rest}: expected KEY=VALUE")
        out.append((key, value))
    return out
