"""Progress bars for slow work: tqdm's ``auto`` front end, looked up when a bar starts (so the text bar that
``pqlab.notebook`` installs in a kernel without a live front end is the one used)."""

from __future__ import annotations

from typing import Any


def bar(*, total: int | None = None, desc: str = "", disable: bool = False, **options: Any) -> Any:
    """A ``tqdm.auto.tqdm`` bar (a context manager; ``update``, ``set_postfix_str``, ``close``)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=disable, **options)


def close_all() -> None:
    """Close every open bar, so a message printed next starts on its own line and no bar redraws over it later
    (an interrupted run's bars are otherwise closed at exit, after the message, and on a terminal erase it)."""
    import sys

    module = sys.modules.get("tqdm.std")
    if module is None:
        return
    for open_bar in list(getattr(module.tqdm, "_instances", ())):
        try:
            open_bar.close()
        except (OSError, ValueError, AttributeError):  # a bar that cannot draw any more must not hide the message
            pass
