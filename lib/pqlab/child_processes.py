"""Worker processes that die with the process that started them: an initialiser for process pools (Linux
``prctl(PR_SET_PDEATHSIG)``), so a SIGKILLed run leaves no orphan computing or waiting forever."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent exits (a pool's ``initializer``, given the parent's
    pid); if the parent is already gone by now, exit at once. A no-op where prctl does not exist."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died between the fork and the prctl above
        os.kill(os.getpid(), signal.SIGKILL)
