"""The ``main()`` of every demo: run a worker under torchrun's process group, print rank 0's
view, and end the process without the interpreter's teardown.

Why the last step: after the worker returns, the group is destroyed (:func:`process_group`), but
gloo's C++ threads, and the futures and hooks they ran for DDP's gradient buckets, can still hold
Python objects. When the interpreter then finalizes, a C++ thread that needs the GIL to release one
is ended by Python with ``pthread_exit``; unwinding a C++ thread that way aborts the process
(``terminate called without an active exception``, SIGABRT), after the results were printed.
PyTorch's own ``destroy_process_group`` says so of its completion hooks ("the dtor might finish
after the Python Interpreter exits. After that grabbing the GIL for the Python hook will crash").
Lesson 14's DDP batch job ended FAILED that way about 1 run in 5. So a demo collects garbage and
destroys the group while the interpreter is whole, flushes its output, and leaves with
``os._exit``: nothing of the process is left to tear down (tests/distributed/test_script.py).
"""

from __future__ import annotations

import os
import pprint
import sys
from collections.abc import Callable

from course.distributed.launch import process_group, rank


def run_script(worker: Callable[[], object], title: str) -> None:
    """Initialise the process group from torchrun's environment, run ``worker``, print on rank 0,
    destroy the group, exit with code 0 (an exception propagates as usual: a failed rank fails)."""
    with process_group():
        result = worker()
        if rank() == 0:
            print(f"== {title} ==")
            pprint.pprint(result, width=100, compact=True)
        del result
    exit_now(0)


def exit_now(code: int) -> None:
    """Flush stdout and stderr, then end this process at once (``os._exit``): no interpreter
    finalization, during which C++ threads still holding Python objects abort the process."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)
