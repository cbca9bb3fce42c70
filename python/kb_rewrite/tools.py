"""Finding and running the kb-rewrite executable.

The binaries are found, in order: $KB_REWRITE / $KB_VERIFY, the source
tree's build directory ($KB_BUILD_DIR, else build/ beside python/), then
$PATH. kb-rewrite itself finds kb-verify beside it or through $KB_VERIFY.
"""

import os
import shutil
import subprocess
import sys
import tempfile


class KbRewriteError(RuntimeError):
    """kb-rewrite failed; `message` is what it printed, `exit_code` its exit
    status (docs/cli.md: 1 usage or unreadable file, 2 malformed or
    unsupported input, 3 internal error)."""

    def __init__(self, message, exit_code=None, command=None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.command = command


def _source_build_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    dirs = []
    if os.environ.get("KB_BUILD_DIR"):
        dirs.append(os.environ["KB_BUILD_DIR"])
    dirs.append(os.path.join(root, "build"))
    return dirs


def find_binary(name, env):
    """The path of `name` (kb-rewrite or kb-verify); KbRewriteError if none."""
    given = os.environ.get(env)
    if given:
        if os.path.isfile(given) and os.access(given, os.X_OK):
            return given
        raise KbRewriteError(f"${env} is '{given}', which is not an executable file",
                             exit_code=1)
    for d in _source_build_dirs():
        path = os.path.join(d, "bin", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise KbRewriteError(
        f"cannot find {name}: set ${env} to it, build it (scripts/build puts it "
        f"in build/bin), or put it on $PATH", exit_code=1)


def binary_identity(path):
    """What the cache key takes from the binary: a rebuilt kb-rewrite may
    generate other kernels."""
    st = os.stat(path)
    return f"{os.path.realpath(path)}:{st.st_size}:{int(st.st_mtime)}"


def run_kb_rewrite(args, *, quiet=False, log=None):
    """Runs kb-rewrite with `args`; its stdout goes to `log` (stderr by
    default) line by line unless `quiet`. Raises KbRewriteError with its
    error output on a non-zero exit."""
    exe = find_binary("kb-rewrite", "KB_REWRITE")
    command = [exe] + [str(a) for a in args]
    log = log or sys.stderr
    # stderr goes to a file: a pipe read only after stdout ends would block
    # kb-rewrite once it filled the pipe's buffer.
    with tempfile.TemporaryFile(mode="w+", errors="replace") as err_file:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err_file,
                                stdin=subprocess.DEVNULL, text=True, errors="replace")
        out_lines = []
        for line in proc.stdout:
            out_lines.append(line)
            if not quiet:
                log.write("kb-rewrite: " + line if not line.startswith("kb-rewrite") else line)
                log.flush()
        code = proc.wait()
        err_file.seek(0)
        err = err_file.read()
    if code != 0:
        message = err.strip() or "".join(out_lines).strip() or f"exit status {code}"
        raise KbRewriteError(message, exit_code=code, command=command)
    if err.strip() and not quiet:
        log.write(err if err.endswith("\n") else err + "\n")
    return "".join(out_lines), err
