"""Projections: reducers, consensus and the fold into read models."""

from projections import compiled as _compiled

# never let a compiled module run in place of a source edited since the build (compiled.py)
_compiled.guard()
