"""One valid call per public calculator, a module of cases per calculator module
(``junk_cases/<module>.py``'s ``CASES``), so a new calculator adds a line to its own module's file.

:data:`VALID` holds them all as ``"<module>.<function>" -> (function, keyword arguments)``.
"""

from __future__ import annotations

import importlib
import pkgutil

VALID: dict[str, tuple] = {
    f"{info.name}.{name}": case
    for info in pkgutil.iter_modules(__path__)
    if info.name != "presets"
    for name, case in importlib.import_module(f"{__name__}.{info.name}").CASES.items()
}
