"""Facts: units, input checks and limits, result tables, number formats, model configs,
the hardware registry and sourced, dated data. Standard library only; imports nothing above it."""
