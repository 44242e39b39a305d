"""Appended to bptt.py: rel_error narrows its own CPU affinity, makes a nested user namespace
and reports what it holds there (capabilities, the host files of _PARAMS["host_files"] in
sight, a fork, a tmpfs it writes to, a /proc mount)."""

_PARAMS: dict = {}   # the run's values, written by the harness (harness.payload)

# ---- appended to the student's module ----
import ctypes
import os

CLONE_NEWUSER = 0x10000000

def _affinity():
    before = sorted(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, before[:1])
    except OSError as exc:
        return f"affinity:refused:{exc.errno}"
    after = sorted(os.sched_getaffinity(0))
    return f"affinity:{','.join(map(str, before))}->{','.join(map(str, after))}"

def _nested_user_namespace():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        return f"userns:refused:{ctypes.get_errno()}"
    header, caps = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()   # capget, version 3
    libc.capget(header, caps)
    effective = caps[0] | caps[3] << 32
    reach = [p for p in _PARAMS["host_files"] if os.path.exists(p)]
    try:                                   # RLIMIT_NPROC 0 still holds in the nested namespace
        pid = os.fork()
    except OSError as exc:
        fork = f"refused:{exc.errno}"
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        fork = "STARTED"
    mounted = "refused"                    # a mount namespace of its own, and a tmpfs in it
    if libc.unshare(0x00020000) == 0 and libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        mounted = "tmpfs"
        written = 0
        try:
            with open("/tmp/beyond-the-jail-limit", "wb", buffering=0) as fh:
                while written < 256 << 20:
                    written += fh.write(b"x" * (1 << 20))
        except OSError as exc:
            written = -exc.errno
        mounted += f"-write:{written >> 20 if written > 0 else written}"
        # /proc (to write a uid map) belongs to the jail's PID namespace, owned by the jail's user namespace
        proc = 0 if libc.mount(b"proc", b"/work", b"proc", 0, None) == 0 else ctypes.get_errno()
        mounted += f"-proc:{proc}"
    # Spaces between the fields: the report elides a run of over 64 characters with none.
    return f"userns:created uid={os.getuid()} capeff={effective:x} host_files={len(reach)} fork={fork} mount={mounted}"

def rel_error(a, b):
    raise RuntimeError("DESIGN " + _affinity() + " " + _nested_user_namespace())
