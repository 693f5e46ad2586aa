"""The nox sessions: what they install, which torch they accept, and a real `nox --no-venv -s matrix`.

The real run asks one cell that the CPU tier always skips (add/native/cudagraphs), so it costs
seconds; against a reference in which that cell passed it must fail as a regression, having
written the results, the summary, the report and the diff first, as the nightly job needs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness_commands import forked_pythons
from required_tools import missing_tool, tool_required

from harness.report.markdown import committed

REPO = Path(__file__).resolve().parents[2]
CPU_FIXTURE = REPO / "tests" / "fixtures" / "cpu-torch2.13.0+cpu-triton3.7.1.jsonl"
CELL = "add/native/cudagraphs"


def require_nox() -> None:
    if importlib.util.find_spec("nox") is None:
        missing_tool("nox", "pyproject's `dev` extra; nox -s tests and .ci/run install it", system=False)


@pytest.fixture(scope="module")
def noxfile():
    require_nox()
    spec = importlib.util.spec_from_file_location("tcm_noxfile", REPO / "noxfile.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harness_dependencies_are_pyprojects_less_torch_and_triton(noxfile) -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    declared = pyproject["project"]
    assert tuple(d for d in declared["dependencies"] if not d.startswith(("torch", "triton"))) == noxfile.HARNESS_DEPENDENCIES
    assert noxfile.BUILD_REQUIREMENTS == tuple(pyproject["build-system"]["requires"])
    assert noxfile.EXTRAS == declared["optional-dependencies"]
    assert "import-linter==2.17" in noxfile.EXTRAS["dev"]  # `lint-imports` runs in nox -s lint and tests


class RecordingSession:
    """What a nox session was asked to do, in order; a virtualenv session unless `venv_backend` says otherwise."""

    def __init__(self, venv_backend: str = "virtualenv") -> None:
        self.venv_backend, self.bin, self.calls = venv_backend, "/venv/bin", []

    def install(self, *args: str) -> None:
        self.calls.append(("install", *args))

    def run_install(self, *args: str, **_: object) -> None:
        self.calls.append(("run_install", *args))

    def run(self, *args: str, **_: object) -> str:
        self.calls.append(("run", *args))
        return "torch 2.13.0+cpu 3.7.1"

    def log(self, *_: object) -> None:
        pass

    def error(self, message: str) -> None:
        raise AssertionError(message)


def test_installs_leave_bytecode_to_one_compile_on_every_core_after_them(noxfile) -> None:
    session = RecordingSession()
    assert noxfile.prepare(session, "default", ["extra-one"], ["--no-deps", "extra-two"])
    kinds = [call[0] for call in session.calls]
    assert kinds == ["install"] * 5 + ["run_install", "run"]  # five pip calls, the compile, the version check
    assert all(call[1] == "--no-compile" for call in session.calls[:5])
    assert session.calls[3][2:] == ("extra-one",) and session.calls[4][2:] == ("--no-deps", "extra-two")
    assert noxfile.BUILD_REQUIREMENTS and session.calls[1][-len(noxfile.BUILD_REQUIREMENTS):] == noxfile.BUILD_REQUIREMENTS
    assert session.calls[2][1:] == ("--no-compile", "--no-deps", "--no-build-isolation", "-e", ".")  # built here
    assert session.calls[5][1:3] == ("/venv/bin/python", "-c") and "workers=0" in session.calls[5][3]
    passthrough = RecordingSession("none")
    assert noxfile.prepare(passthrough, "default", ["extra-one"])
    assert [call[0] for call in passthrough.calls] == ["run"]  # --no-venv installs and compiles nothing


class RecordingCompile:
    def __init__(self, session: RecordingSession, exit_code: int = 0) -> None:
        self.session, self.exit_code = session, exit_code

    def __call__(self, interpreter: str) -> RecordingCompile:
        self.session.calls.append(("compile started", interpreter))
        return self

    def wait(self) -> int:
        self.session.calls.append(("compile ended",))
        return self.exit_code


def test_what_runs_meanwhile_runs_while_the_bytecode_compiles_and_a_failed_compile_fails(noxfile, monkeypatch) -> None:
    session = RecordingSession()
    monkeypatch.setattr(noxfile, "start_compile", RecordingCompile(session))
    assert noxfile.prepare(session, "default", meanwhile=lambda: session.calls.append(("lint",)))
    assert [call[0] for call in session.calls] == ["install"] * 3 + ["compile started", "lint", "compile ended", "run"]
    assert session.calls[3][1] == "/venv/bin/python"
    passthrough = RecordingSession("none")
    assert noxfile.prepare(passthrough, "default", meanwhile=lambda: passthrough.calls.append(("lint",)))
    assert [call[0] for call in passthrough.calls] == ["run", "lint"]  # nothing compiled: after the version check
    failed = RecordingSession()
    monkeypatch.setattr(noxfile, "start_compile", RecordingCompile(failed, exit_code=3))
    with pytest.raises(AssertionError, match="bytecode exited 3"):
        noxfile.prepare(failed, "default", meanwhile=lambda: failed.calls.append(("lint",)))
    linted = RecordingSession()
    monkeypatch.setattr(noxfile, "start_compile", RecordingCompile(linted))

    def failing_lint() -> None:
        raise RuntimeError("mypy failed")

    with pytest.raises(RuntimeError, match="mypy failed"):
        noxfile.prepare(linted, "default", meanwhile=failing_lint)
    assert linted.calls[-1] == ("compile ended",)  # the compile is waited for, not left running


class EnvironmentSession(RecordingSession):
    """Records the environment each command is run with."""

    posargs: list[str] = []

    def run(self, *args: str, **kwargs: object) -> str:
        self.calls.append(("run", *args, kwargs.get("env")))
        return "torch 2.13.0+cpu 3.7.1"


def test_the_tests_session_requires_the_tools_it_installs_and_a_system_tool_only_in_ci(noxfile, monkeypatch) -> None:
    """The README's `nox -s tests` on a machine with only Python and nox: actionlint and shellcheck (pip wheels the
    session installs) must be there, chromium (a system package) skips when it is not; CI=true requires both."""
    monkeypatch.setattr(noxfile, "prepare", lambda *_, **__: True)
    session = EnvironmentSession()
    noxfile.tests(session)
    environ = session.calls[-1][-1]
    assert isinstance(environ, dict) and "CI" not in environ
    assert tool_required(system=False, environ=environ) and not tool_required(system=True, environ=environ)
    assert tool_required(system=True, environ={**environ, "CI": "true"})
    passthrough = EnvironmentSession("none")  # --no-venv: nothing installed, so nothing required beyond CI's rule
    noxfile.tests(passthrough)
    assert not tool_required(system=False, environ=passthrough.calls[-1][-1])


def test_the_compile_writes_each_installed_modules_bytecode_beside_it(noxfile, tmp_path: Path) -> None:
    venv = tmp_path / "tests" / "venv"  # a folder named `tests` above site-packages, as in .nox/tests
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "tcm_installed_probe.py").write_text("VALUE = 1\n")
    (purelib / "tcm_broken_probe.py").write_text("def (\n")  # pip leaves such files uncompiled, and so does this
    (purelib / "tcm_package" / "tests").mkdir(parents=True)
    (purelib / "tcm_package" / "tests" / "test_probe.py").write_text("VALUE = 1\n")
    environment = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONPYCACHEPREFIX")}
    environment.update({"PYTHONDONTWRITEBYTECODE": "1", "SOURCE_DATE_EPOCH": "0", "TMPDIR": str(tmp_path / "tmp")})
    (tmp_path / "tmp").mkdir()
    # where the harness's Pythons read bytecode in that environment (harness.run.bytecode.run_prefix)
    prefix = tmp_path / "tmp" / f"tcm-caches-{os.getuid()}" / "pycache"
    subprocess.run([str(python), "-c", noxfile.COMPILE_SITE_PACKAGES], check=True, env=environment, timeout=300,
                   cwd=REPO)
    compiled = list((purelib / "__pycache__").glob("tcm_installed_probe.*.pyc"))
    assert len(compiled) == 1
    assert compiled[0].read_bytes()[4:8] == b"\0\0\0\0"  # timestamp-checked, as pip and an import write them
    assert not list((purelib / "__pycache__").glob("tcm_broken_probe.*.pyc"))
    assert not (purelib / "tcm_package" / "tests" / "__pycache__").exists()  # a package's tests: never imported
    copied = prefix / str(purelib).lstrip(os.sep) / compiled[0].name
    assert copied.read_bytes() == compiled[0].read_bytes()


def test_the_noxfile_declares_no_dependency_of_its_own() -> None:
    """pyproject.toml is the one place: no requirement it declares is typed again in the noxfile."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    text = (REPO / "noxfile.py").read_text(encoding="utf-8")
    retyped = [r for r in declared if f'"{r}"' in text or f"'{r}'" in text]
    assert not retyped, f"noxfile.py names {retyped} again; read them from pyproject.toml"


def test_matrix_diffs_against_what_the_docs_render_from(noxfile) -> None:
    assert REPO / noxfile.REFERENCE["gpu"] == committed.GPU_FIXTURE_RESULTS
    assert REPO / noxfile.PUBLISHED_GPU_RESULTS == committed.PUBLISHED_GPU_RESULTS
    assert all((REPO / path).is_file() for path in noxfile.REFERENCE.values())


def test_reference_is_the_published_gpu_run_unless_this_run_is_it(noxfile, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TCM_REFERENCE", raising=False)
    monkeypatch.setattr(noxfile, "REPO", tmp_path)
    assert noxfile.reference_for("gpu", tmp_path / "run.jsonl") == noxfile.REFERENCE["gpu"]
    (tmp_path / noxfile.PUBLISHED_GPU_RESULTS).parent.mkdir()
    (tmp_path / noxfile.PUBLISHED_GPU_RESULTS).write_text("{}\n")
    assert noxfile.reference_for("gpu", tmp_path / "run.jsonl") == noxfile.PUBLISHED_GPU_RESULTS
    assert noxfile.reference_for("gpu", tmp_path / noxfile.PUBLISHED_GPU_RESULTS) == noxfile.REFERENCE["gpu"]
    assert noxfile.reference_for("cpu", tmp_path / "run.jsonl") == noxfile.REFERENCE["cpu"]
    monkeypatch.setenv("TCM_REFERENCE", "mine.jsonl")
    assert noxfile.reference_for("gpu", tmp_path / "run.jsonl") == "mine.jsonl"


def test_torch_requirements(noxfile, monkeypatch) -> None:
    monkeypatch.delenv("TCM_TRITON", raising=False)
    monkeypatch.setattr(noxfile, "TORCH_INDEX", None)
    assert noxfile.torch_requirements("default") == [noxfile.TORCH, noxfile.TRITON]
    assert noxfile.torch_requirements("2.11.0") == ["torch==2.11.0", "triton==3.6.0"]
    assert noxfile.torch_requirements("2.9.1") == ["torch==2.9.1", "triton"]  # torch's own pin decides
    assert noxfile.torch_requirements("nightly") == ["--pre", "torch", "--index-url", noxfile.NIGHTLY_INDEX]
    monkeypatch.setattr(noxfile, "TORCH_INDEX", "https://example.invalid/whl/cu130")
    assert noxfile.torch_requirements("stable")[-2:] == ["--index-url", "https://example.invalid/whl/cu130"]


@pytest.mark.parametrize(("choice", "installed", "accepted"), [
    ("default", "2.16.0.dev20261101+cu130", True),
    ("2.11.0", "2.11.0+cu130", True),
    ("2.11.0", "2.13.0+cpu", False),
    ("nightly", "2.16.0.dev20261101+cu130", True),
    ("nightly", "2.13.0+cpu", False),
    ("stable", "2.15.0", True),
    ("stable", "2.16.0.dev20261101+cu130", False),
])
def test_no_venv_checks_the_installed_torch_is_the_one_asked(noxfile, choice, installed, accepted) -> None:
    assert (noxfile.check_torch(choice, installed) is None) is accepted


def test_option_value_reads_what_harness_run_will(noxfile) -> None:
    assert noxfile.option_value(["-k", "add", "-o", "a.jsonl", "--output=b.jsonl"], "-o", "--output") == "b.jsonl"
    assert noxfile.option_value(["--shard", "2/4"], "--shard") == "2/4"
    assert noxfile.option_value(["-k", "add"], "-o", "--output") is None


def nox(*args: str, env: dict[str, str] | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    require_nox()
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(REPO / "noxfile.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_plain_matrix_is_one_session_and_each_torch_has_its_own() -> None:
    completed = nox("-l", "--json", "-s", "matrix")
    assert completed.returncode == 0, completed.stderr
    assert [s["session"] for s in json.loads(completed.stdout)] == ["matrix"]
    named = ["matrix(torch='2.11.0')", 'matrix(torch="nightly")', "matrix(torch='stable')", "tests", "lint", "docs",
             "bench"]
    assert nox("-l", "--json", "-s", *named).returncode == 0
    assert nox("-l", "--json", "-s", "matrix(torch='0.0.0')").returncode != 0


def reference(tmp_path: Path, outcome: str) -> Path:
    """The committed CPU results' header and one cell, its outcome replaced."""
    lines = CPU_FIXTURE.read_text(encoding="utf-8").splitlines()
    record = next(json.loads(line) for line in lines[1:] if json.loads(line)["id"] == CELL)
    record.update(outcome=outcome, reason=None if outcome == "pass" else record["reason"])
    path = tmp_path / f"reference-{outcome}.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    return path


def run_matrix(tmp_path: Path, reference_outcome: str) -> tuple[subprocess.CompletedProcess, Path]:
    results = tmp_path / f"run-{reference_outcome}.jsonl"
    # the run's zygote forked by the suite's maker, as harness_command's runs have theirs: the question is nox's session
    completed = nox("--no-venv", "-s", "matrix", "--", "--tier", "cpu", "-k", "add", "-s", "native", "-p", "cudagraphs",
                    "-n", "1", "-o", str(results),
                    env={"TCM_REFERENCE": str(reference(tmp_path, reference_outcome)), **forked_pythons()},
                    timeout=600)
    return completed, results


@pytest.fixture(scope="module")
def skip_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """The run against a reference in which the cell was skipped too: written once, read by the test of what it
    writes and copied by the test that resumes it (the same command ran twice before, about 16 s of CPU each)."""
    return run_matrix(tmp_path_factory.mktemp("nox-skip"), "skip")


@pytest.mark.slow
def test_no_venv_matrix_writes_results_report_and_diff(skip_run: tuple[subprocess.CompletedProcess, Path]) -> None:
    completed, results = skip_run
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    stem = str(results).removesuffix(".jsonl")
    for path in (results, Path(f"{stem}.md"), Path(f"{stem}.report.md"), Path(f"{stem}.diff.md")):
        assert path.is_file(), f"{path} not written\n{completed.stderr[-3000:]}"
    assert "0 regressions" in Path(f"{stem}.diff.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_no_venv_matrix_fails_on_a_regression_after_writing_everything(tmp_path: Path) -> None:
    completed, results = run_matrix(tmp_path, "pass")
    assert completed.returncode != 0
    assert "diff exited 1" in completed.stderr, completed.stderr[-3000:]
    diff = Path(str(results).removesuffix(".jsonl") + ".diff.md").read_text(encoding="utf-8")
    assert "Regressions (1)" in diff and "add/native/cudagraphs" in diff
    assert Path(str(results).removesuffix(".jsonl") + ".report.md").is_file()


@pytest.mark.slow
def test_no_venv_matrix_resumes_a_stopped_run(skip_run: tuple[subprocess.CompletedProcess, Path], tmp_path: Path) -> None:
    """`-- --resume FILE` appends the missing cells to FILE (nox must not add --overwrite), then reports on all of them.
    FILE is a copy of the shared run's results, so the test of what that run wrote reads it unchanged."""
    completed, written = skip_run
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = tmp_path / written.name
    shutil.copyfile(written, results)
    resumed = nox("--no-venv", "-s", "matrix", "--", "--tier", "cpu", "-k", "add", "-s", "native", "-p", "cudagraphs",
                  "-p", "cpu_fallback", "-n", "1", "--resume", str(results),
                  env={"TCM_REFERENCE": str(reference(tmp_path, "skip")), **forked_pythons()}, timeout=600)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "1 of 2 cells already in" in resumed.stdout + resumed.stderr
    cells = [json.loads(line)["id"] for line in results.read_text(encoding="utf-8").splitlines()[1:]]
    assert cells == ["add/native/cudagraphs", "add/native/cpu_fallback"]
    report = Path(str(results).removesuffix(".jsonl") + ".report.md").read_text(encoding="utf-8")
    assert "a CPU fallback means nothing" in report  # the resumed cell's skip reason: the report covers the whole file
