"""Templates run in a sandboxed Jinja2 environment everywhere — the prompt builders (hub and
CLI alike) and the hub's own pages: a template that reaches for Python internals is refused
before the run, or by the sandbox when it renders, and never runs anything."""

from __future__ import annotations

from pathlib import Path

import jinja2.sandbox
import pytest

from harness.components.prompt import DefaultPromptBuilder, DefaultPromptConfig, template_env
from harness.core.errors import ConfigError
from tests.cli.helpers import galapagos

#: Escapes a template author would try; each writes MARK if it gets out.
STATIC = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.system('touch MARK') }}",
    "{{ joiner.__init__.__globals__['os'].popen('touch MARK').read() }}",
    "{{ lipsum['__globals__']['os'].system('touch MARK') }}",
    "{{ self._TemplateReference__context }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
]
#: Escapes no look at the template's syntax can see: the sandbox refuses them as they render.
DYNAMIC = [
    "{{ cycler|attr('__init__')|attr('__globals__') }}",
    "{{ cycler|attr('\\x5f\\x5finit\\x5f\\x5f') }}",
    "{{ '{0.__class__.__base__.__subclasses__}'.format(cycler) }}",
    "{% set l = [1] %}{{ l.append(2) }}{{ l }}",
    "{{ range|attr('__globals__') }}",
]


def _folder(base: Path, system: str, marker: Path) -> Path:
    folder = base / "tpl"
    folder.mkdir(exist_ok=True)
    (folder / "system.j2").write_text(system.replace("MARK", str(marker)))
    return folder


@pytest.mark.parametrize("escape", STATIC)
def test_a_template_reaching_for_internals_is_refused_when_the_builder_is_made(
    tmp_path: Path, escape: str
) -> None:
    marker = tmp_path / "escaped"
    folder = _folder(tmp_path, escape, marker)
    with pytest.raises(ConfigError, match="refused"):
        DefaultPromptBuilder(DefaultPromptConfig(template_dir=str(folder)))
    assert not marker.exists()


@pytest.mark.parametrize("escape", DYNAMIC)
def test_what_the_check_cannot_see_the_sandbox_refuses_as_it_renders(
    tmp_path: Path, escape: str
) -> None:
    marker = tmp_path / "escaped"
    builder = DefaultPromptBuilder(
        DefaultPromptConfig(template_dir=str(_folder(tmp_path, escape, marker)))
    )
    try:
        text = builder.system_message()
    except ConfigError as exc:
        assert "refused by the sandbox" in str(exc) or "cannot render" in str(exc)
    else:  # rendered inert: nothing of Python's reached the text
        assert "<function" not in text and "<class" not in text and "[1, 2]" not in text, text
    assert not marker.exists()


def test_every_template_environment_is_sandboxed() -> None:
    from harness.service.routers import pages
    from scaffolds.openevolve.prompt import OpenEvolvePromptBuilder  # noqa: F401 - uses it

    assert isinstance(template_env(), jinja2.sandbox.ImmutableSandboxedEnvironment)
    assert isinstance(DefaultPromptBuilder()._env, jinja2.sandbox.SandboxedEnvironment)
    assert isinstance(pages._env, jinja2.sandbox.SandboxedEnvironment)
    # The shipped templates render in it unchanged.
    assert DefaultPromptBuilder().system_message()


def test_the_cli_refuses_a_hostile_template_folder_with_one_line(tmp_path: Path) -> None:
    marker = tmp_path / "escaped"
    folder = _folder(tmp_path, STATIC[1], marker)
    proc = galapagos(
        "run",
        "--scaffold",
        "topk",
        "--task",
        "function_minimization",
        "--iterations",
        "1",
        "--sandbox",
        "local",
        "--set",
        f"prompt.template_dir={folder}",
        store=tmp_path / "s.sqlite",
    )
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "refused" in line]
    assert len(lines) == 1 and "attribute '__" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()
