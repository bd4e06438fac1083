"""Child processes that die with the process that started them (Linux ``prctl(PR_SET_PDEATHSIG)``): an initialiser
for process pools and a ``preexec_fn`` for spawned programs, so a SIGKILLed run leaves no orphan computing or waiting
forever."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def signal_on_parent_death(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent (thread) exits: a ``preexec_fn`` for a spawned
    program. False where prctl does not exist (not Linux): the caller's own clean-up is then all there is."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return True


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL this process when its parent exits (a pool's ``initializer``, given the parent's pid); if the parent
    is already gone by now, exit at once."""
    if signal_on_parent_death(signal.SIGKILL) and os.getppid() != parent_pid:  # it died before the prctl
        os.kill(os.getpid(), signal.SIGKILL)
