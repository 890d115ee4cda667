"""Calculator widgets, one module per widget, all on :class:`course.widgets.base.Calculator`.

| module | widget | lesson |
|---|---|---|
| ``roofline`` | ``roofline_explorer()`` | 02 |
| ``decode`` | ``decode_speed_calculator()`` | 02 |
| ``fit`` | ``will_it_fit()`` | 04 |
| ``techniques`` | ``technique_table()`` | 07 |

A new widget is a new module here with a builder that returns a ``Calculator``, exported below.
Tests drive them by setting ``calc.controls[name].value`` and reading ``calc.output.value``.
Layer 4 (presentation).
"""

from course.widgets.base import ERROR_COLOUR, Calculator, error_html, parse_number
from course.widgets.decode import decode_speed_calculator
from course.widgets.fit import will_it_fit
from course.widgets.roofline import roofline_explorer
from course.widgets.techniques import technique_table

__all__ = [
    "ERROR_COLOUR",
    "Calculator",
    "decode_speed_calculator",
    "error_html",
    "parse_number",
    "roofline_explorer",
    "technique_table",
    "will_it_fit",
]
