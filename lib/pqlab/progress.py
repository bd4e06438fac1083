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


class LineTracking:
    """A text stream that passes everything to ``stream`` and remembers whether what it last wrote ended a line.

    The command line writes through one on stderr, so an interrupt message starts on its own line even when a bar
    was interrupted inside tqdm's constructor, after drawing its first line: tqdm then never closes that bar (it is
    gone before ``close_all`` can see it) and the line stays open."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.at_line_start = True

    def write(self, text: str) -> int:
        if text:
            self.at_line_start = text.endswith("\n")
        return self.stream.write(text)

    def end_line(self) -> None:
        """Write a newline when the last write left a line open."""
        if not self.at_line_start:
            self.write("\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
