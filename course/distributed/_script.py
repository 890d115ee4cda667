"""The ``main()`` of every demo: run a worker under torchrun's process group, print rank 0's
view."""

from __future__ import annotations

import pprint
from collections.abc import Callable

from course.distributed.launch import process_group, rank


def run_script(worker: Callable[[], object], title: str) -> None:
    """Initialise the process group from torchrun's environment, run ``worker``, print on rank 0."""
    with process_group():
        result = worker()
        if rank() == 0:
            print(f"== {title} ==")
            pprint.pprint(result, width=100, compact=True)
