"""Every file the analysis library writes goes through here: one rule for outputs
(docs/results-format.md, "Guarantees", "Outputs").

    atomic_write_text(path, text, inputs=run.inputs)     # report.html, summary.csv, compare --out, ...
    atomic_write_bytes(path, data, inputs=...)
    save_figure(fig, path, inputs=..., dpi=110)          # a matplotlib figure, in the format of its suffix
    output_directory(path, inputs=...)                   # plots/, tune's directory

1. An output path's symbolic links are followed: the write goes to the link's final target (as
   sqlite and editors write through links); the link itself stays.
2. The resolved target must be absent, a regular file (file outputs) or a directory (directory
   outputs); a device, FIFO, socket or other non-regular file is refused and nothing is written.
3. An output that resolves to one of the command's inputs (the same file after resolving links,
   or a hard link to it; for a directory output, an input run directory or an input file) is
   refused.
4. A file is replaced atomically: a temporary file `.NAME.tmp-XXXXXXXX` in the resolved target's
   directory is written, fsync'd, given the umask's mode (0666 & ~umask, as every other file of
   a run) and renamed over the target. On any failure the temporary file is removed and an
   `OutputError` names the path and the reason (read-only file system, no space left, ...).

`OutputError` is a `ResultsError`: the command line reports it in one line with exit status 2.
"""

import errno
import gzip
import io
import os
import stat
import tempfile
from pathlib import Path

from .results import ResultsError, file_kind


class OutputError(ResultsError):
    """An output the rule refuses, or one that could not be written; the message names the path."""


def umask():
    """The process's umask (from /proc/self/status where the kernel reports it, so that no other
    thread sees a changed umask; else by setting and restoring it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _named(path, target):
    """`path`, and the file it resolves to when that differs."""
    given = os.path.abspath(os.fspath(path))
    return f"{path}" if given == target else f"{path} (-> {target})"


def resolve_output(path):
    """The absolute path an output at `path` is written to: every symbolic link followed to its
    final target, which may not exist yet. OutputError for a link loop."""
    target = os.path.realpath(os.path.abspath(os.fspath(path)))
    try:
        if stat.S_ISLNK(os.lstat(target).st_mode):  # realpath stops inside a loop of links
            raise OutputError(f"{path}: a loop of symbolic links; refused, nothing written")
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {e.strerror}") from None
    return target


def _same_file(target, st, inputs):
    """The input `target` (with lstat `st`, or None when absent) is, or None."""
    for i in inputs or ():
        if i is None:
            continue
        real = os.path.realpath(os.path.abspath(os.fspath(i)))
        if real == target:
            return i
        if st is not None:
            try:
                if os.path.samestat(st, os.stat(real)):
                    return i
            except OSError:
                continue
    return None


def check_output_path(path, *, kind="file", inputs=()):
    """Applies rules 1 to 3 to an output `path` (`kind` "file" or "dir") of a command that reads
    `inputs` (paths of files and directories); returns the resolved target (str). OutputError
    when the rule refuses it."""
    target = resolve_output(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise OutputError(f"{_named(path, target)}: a component of the path is not a directory; "
                          "nothing written") from None
    except OSError as e:
        raise OutputError(f"{_named(path, target)}: cannot write: {e.strerror}") from None
    if st is not None:
        ok = stat.S_ISREG(st.st_mode) if kind == "file" else stat.S_ISDIR(st.st_mode)
        if not ok:
            expected = "a regular file or absent" if kind == "file" else "a directory or absent"
            raise OutputError(f"{_named(path, target)}: is {file_kind(st.st_mode)}; refused (an output must be "
                              f"{expected}), nothing written")
    same = _same_file(target, st, inputs)
    if same is not None:
        raise OutputError(f"{_named(path, target)}: is {'' if os.fspath(same) == os.fspath(path) else 'the same as '}"
                          f"{same}, an input of this command; refused (an output never replaces what the command "
                          "reads), nothing written")
    return target


def output_directory(path, *, inputs=()):
    """Checks a directory output (absent or a directory, not an input) and creates it with its
    parents; returns it as a Path (the path as given, which writes go through)."""
    target = check_output_path(path, kind="dir", inputs=inputs)
    try:
        os.makedirs(target, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{_named(path, target)}: cannot create the directory: {e.strerror}") from None
    return Path(path)


def _fsync(fd):
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):  # a file system without fsync
            raise


def atomic_write_bytes(path, data, *, inputs=()):
    """Writes `data` to the file `path` by the rule (module text); returns Path(path)."""
    target = check_output_path(path, kind="file", inputs=inputs)
    parent, name = os.path.split(target)
    tmp = None
    try:
        os.makedirs(parent, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.tmp-", dir=parent)
        try:
            view = memoryview(data).cast("B")
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o666 & ~umask())
            _fsync(fd)
        finally:
            os.close(fd)
        # What was checked may have changed meanwhile: a non-regular file put at the target is
        # still not replaced.
        check_output_path(path, kind="file", inputs=inputs)
        os.replace(tmp, target)
        tmp = None
        try:
            dfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                _fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass  # the file is in place; the directory's own sync is best effort
    except OSError as e:
        raise OutputError(f"{_named(path, target)}: cannot write: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return Path(path)


def atomic_write_text(path, text, *, inputs=(), encoding="utf-8"):
    """`atomic_write_bytes` of `text` encoded (UTF-8 by default; newlines as given)."""
    return atomic_write_bytes(path, text.encode(encoding), inputs=inputs)


def save_figure(fig, path, *, inputs=(), **savefig_kw):
    """A matplotlib figure written by the rule, in the format of the path's suffix. An .svgz is the SVG
    gzip-compressed with a zero timestamp (matplotlib's own svgz stamps the time), so that the same
    figure gives the same bytes."""
    fmt = Path(path).suffix.lstrip(".").lower()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg" if fmt == "svgz" else fmt, **savefig_kw)
    if fmt == "svgz":
        data = gzip.compress(buf.getvalue(), compresslevel=9, mtime=0)
    elif fmt == "png":
        data = _palette_png(buf.getvalue())
    else:
        data = buf.getbuffer()
    return atomic_write_bytes(path, data, inputs=inputs)


def _palette_png(png):
    """An opaque PNG figure as a 256-colour palette image (an octree palette, no dithering): a plot's
    flat colours and antialiased edges fit in it, at about a third of the bytes of 32-bit RGBA. A
    figure with transparency is kept as it is."""
    from PIL import Image

    im = Image.open(io.BytesIO(png))
    if im.mode == "RGBA" and im.getextrema()[3][0] < 255:
        return png
    pal = im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    pal.save(out, format="PNG", optimize=True)
    return out.getvalue()


__all__ = ["OutputError", "atomic_write_bytes", "atomic_write_text", "save_figure", "check_output_path",
           "output_directory", "resolve_output", "umask"]
