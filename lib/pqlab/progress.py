"""Progress bars for slow work: tqdm's ``auto`` front end, looked up when a bar starts (so the text bar that
``pqlab.notebook`` installs in a kernel without a live front end is the one used)."""

from __future__ import annotations

from typing import Any


def bar(*, total: int | None = None, desc: str = "", disable: bool = False, **options: Any) -> Any:
    """A ``tqdm.auto.tqdm`` bar (a context manager; ``update``, ``set_postfix_str``, ``close``)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=disable, **options)
