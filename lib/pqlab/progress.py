"""Progress bars for slow loops: widgets with a live Jupyter front end, text on a terminal, none in a headless run."""

from __future__ import annotations

from typing import Any


def bar(*, enabled: bool = True, **options: Any):
    """A ``tqdm`` bar (``options`` as tqdm's). In a kernel without a live front end (papermill, ``dvc repro``)
    it is disabled: a widget there is output no one sees and traffic nobody answers."""
    from tqdm.auto import tqdm

    from pqlab.notebook import in_headless_kernel

    return tqdm(disable=not enabled or in_headless_kernel(), **options)
