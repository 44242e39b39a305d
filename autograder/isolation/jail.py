"""Kernel isolation for the worker: namespaces, a size-limited tmpfs root, no privileges.

The worker process (P0, started by the grader) calls `enter()` after it has loaded
everything it will ever need. Two modes, chosen by who started the grader:

- "root" (CI, instructor regrades): new mount, PID, network, IPC and UTS namespaces; the
  process that runs student code drops to a uid of its own (UID_BASE + P0's pid), so two
  workers never share a uid and none shares one with any real user;
- "userns" (a teaching assistant's laptop, a runner without sudo): the same namespaces
  inside a new unprivileged user namespace, where the grader's uid is mapped to 0; the
  process that runs student code then drops every capability.

In both, three processes are involved:

    P0 (grader's child) --fork--> init (PID 1 of the new PID namespace) --fork--> server

init mounts a tmpfs of `disk_mb` (nosuid, nodev, noexec) as the new root with pivot_root,
writes the submission's files into /submission, detaches the old root (nothing of the
host's file system is reachable any more), then forks the server, which runs student
code and can start no process (RLIMIT_NPROC 0). When init dies the kernel kills everything
in its namespace; init dies with P0 (parent-death signal), and P0 is what the grader kills.
The server's wait status travels back to P0, which dies the same way, so the grader sees
exactly how student code ended.

Where no namespace can be made (macOS, a kernel that forbids user namespaces), `enter()`
raises `Unavailable`: the caller decides whether to refuse or to run unisolated.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal
import struct

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
MNT_DETACH = 0x2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SYS_PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41}
UID_BASE = 2_000_000_000
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class Unavailable(RuntimeError):
    """This machine cannot isolate the worker (no namespaces)."""


_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> int:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _prctl(option: int, arg: int = 0) -> int:
    return _c().prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def _die_with_parent(expected_ppid: int) -> None:
    """SIGKILL when the parent dies. `expected_ppid` is the parent's pid as this process
    sees it (0 for init, whose parent is outside its PID namespace)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != expected_ppid:        # the parent died before the line above
        os._exit(1)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_c().mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                      ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")


def _pivot_root(new_root: str) -> None:
    number = SYS_PIVOT_ROOT.get(platform.machine().lower())
    if number is None:
        raise Unavailable(f"pivot_root: unknown syscall number on {platform.machine()}")
    os.chdir(new_root)
    os.mkdir(".old", 0o700)
    _check(_c().syscall(number, b".", b".old"), "pivot_root")
    os.chdir("/")
    _check(_c().umount2(b"/.old", MNT_DETACH), "umount the old root")
    os.rmdir("/.old")


def _drop_capabilities() -> None:
    """Empty every capability set (used as root of a user namespace: uid 0 means nothing then)."""
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() == errno.EINVAL:
            break
    header = ctypes.create_string_buffer(struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0))
    data = ctypes.create_string_buffer(bytes(24))    # two (effective, permitted, inheritable) triples
    _check(_c().capset(header, data), "capset")


def _build_root(jail: str, files: dict[str, bytes], disk_mb: int) -> None:
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", jail, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={disk_mb}m,mode=0755")
    os.mkdir(os.path.join(jail, "submission"), 0o755)
    for name, data in files.items():
        path = os.path.join(jail, "submission", name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    for folder in ("work", "tmp"):
        os.mkdir(os.path.join(jail, folder), 0o777)
    _pivot_root(jail)


def _reproduce(status: int) -> None:
    """End this process the way the server ended (its wait status)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _flags(as_root: bool) -> int:
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    return flags if as_root else flags | CLONE_NEWUSER


def _unshare(as_root: bool) -> None:
    uid, gid = os.getuid(), os.getgid()
    if _c().unshare(_flags(as_root)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot create namespaces: {os.strerror(err)}")
    if not as_root:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")


def probe(jail: str) -> None:
    """Raise `Unavailable` unless this process can build the jail: a throwaway child tries
    the namespaces and the tmpfs mount (some kernels allow a user namespace, but no mount
    in it)."""
    if not hasattr(os, "fork") or platform.system() != "Linux" or not hasattr(_c(), "unshare"):
        raise Unavailable(f"{platform.system()} has no Linux namespaces")
    err_r, err_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(err_r)
        try:
            _unshare(os.geteuid() == 0)
            _mount("none", "/", None, MS_REC | MS_PRIVATE)
            _mount("tmpfs", jail, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m")
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, whatever it was
            os.write(err_w, str(exc).encode()[:500])
            os._exit(1)
        os._exit(0)
    os.close(err_w)
    _, status = os.waitpid(child, 0)
    reason = os.read(err_r, 600).decode(errors="replace")
    os.close(err_r)
    if status != 0:
        raise Unavailable(reason or f"the namespace probe ended with status {status}")


def enter(jail: str, files: dict[str, bytes], disk_mb: int, keep_fds: tuple[int, ...]) -> dict:
    """Isolate this process; returns (in the server only) what was applied.

    `jail` is an empty folder to mount the tmpfs on, `files` the submission (name -> bytes),
    `keep_fds` the protocol pipes, which only the server keeps open.
    """
    as_root = os.geteuid() == 0
    p0 = os.getpid()
    probe(jail)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)       # P0 dies with the grader
    _unshare(as_root)
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:                                          # P0: wait, then end as the server ended
        for fd in keep_fds + (status_w,):
            os.close(fd)
        os.waitpid(init, 0)
        data = os.read(status_r, 16)
        _reproduce(int(data) if data.strip() else (1 << 8))
    # init: PID 1 of the new namespace
    os.close(status_r)
    _die_with_parent(0)
    _prctl(PR_SET_DUMPABLE, 0)                        # the server cannot ptrace it
    _build_root(jail, files, disk_mb)
    server = os.fork()
    if server:
        for fd in keep_fds:
            os.close(fd)
        _, status = os.waitpid(server, 0)
        os.write(status_w, str(status).encode())
        os._exit(0)
    # server: runs student code
    os.close(status_w)
    _die_with_parent(1)
    applied = {"mode": "root" if as_root else "userns", "pid_namespace": True, "network_isolated": True,
               "private_root": True, "uid_dropped": False, "capabilities_dropped": False}
    if as_root:
        worker_uid = UID_BASE + p0
        os.chown("/work", worker_uid, worker_uid)
        os.chown("/tmp", worker_uid, worker_uid)
        os.setgroups([])
        os.setresgid(worker_uid, worker_uid, worker_uid)
        os.setresuid(worker_uid, worker_uid, worker_uid)      # clears every capability
        applied["uid_dropped"] = os.getuid() == worker_uid
    else:
        _drop_capabilities()
    applied["capabilities_dropped"] = True
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
    os.chdir("/work")
    return applied
