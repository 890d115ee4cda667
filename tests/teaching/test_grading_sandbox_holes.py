"""The sandbox's last holes (issue 35), each with a real sandbox: kernel keyrings (a key one
submission added was read by the next one in its slot, and by a host process as ``nobody``)."""

from __future__ import annotations

import os
import sys

import pytest
from teaching.grading import sandbox

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

KEYRING = r"""
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
USER_KEYRING, SESSION_KEYRING, KEYCTL_GET_KEYRING_ID = -4, -3, 0
for ring in (USER_KEYRING, SESSION_KEYRING):
    key = libc.syscall(ADD_KEY, b"user", b"left-by-a-submission", b"secret", 6, ring)
    print("ADD_KEY", ring, key, os.strerror(ctypes.get_errno()) if key < 0 else "added")
got = libc.syscall(KEYCTL, KEYCTL_GET_KEYRING_ID, USER_KEYRING, 0)
print("KEYCTL", got, os.strerror(ctypes.get_errno()) if got < 0 else "reached")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="keyrings and seccomp are Linux's")
def test_kernel_keyrings_are_out_of_a_submissions_reach(tmp_path):
    tmp_path.chmod(0o777)
    out = sandbox.run(
        tmp_path, [sys.executable, "-I", "-c", KEYRING], env={}, timeout_seconds=60
    ).output
    lines = [line for line in out.splitlines() if line.startswith(("ADD_KEY", "KEYCTL"))]
    assert len(lines) == 3, out
    for line in lines:
        assert line.endswith(os.strerror(1)), line  # EPERM: refused, nothing added or read
