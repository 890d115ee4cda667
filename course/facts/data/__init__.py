"""Sourced, dated data the course ships: reference runs measured on real GPUs."""
