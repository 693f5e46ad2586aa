"""Writes that either fully happen or leave the old file untouched: a text written, or a file copied, into place."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def _umask() -> int:
    """mkstemp makes 0600 files; a new report should get the usual umask-derived mode."""
    current = os.umask(0)
    os.umask(current)
    return current


def write_text_atomic(path: str | Path, text: str, durable: bool = True) -> Path:
    """Write via a temp file in the same directory, then os.replace: a failure never truncates `path`, and a reader
    sees the old text or the new. `durable` also syncs it to disk first, so that it outlives the machine's crash;
    a file only other processes of the same run read (a worker's note of its current cell) needs only the
    replace, which already outlives the writer's own crash."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(temp_name, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        os.replace(temp_name, path)
    except OSError as exc:
        Path(temp_name).unlink(missing_ok=True)
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from exc
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return path


def copy_file_atomic(source: str | Path, target: str | Path, keep_metadata: bool = False) -> Path:
    """Copy `source` to a file of this process's own beside `target`, then os.replace it into place: two processes
    copying the same file at once never leave a reader a half-copied one (caches and bytecode shared by a run's
    processes). `keep_metadata` also copies the mode and times (`shutil.copy2`); otherwise the copy gets the umask's
    mode and a new mtime, as `shutil.copyfile` makes it. Not synced: a cache copied again after a crash loses
    nothing. `target`'s folder must exist: a caller copying many files into one folder makes it once."""
    target = Path(target)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        (shutil.copy2 if keep_metadata else shutil.copyfile)(source, partial)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target
