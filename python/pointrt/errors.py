"""Errors raised by the pointrt Python package."""


class PointrtError(Exception):
    """Base class of pointrt errors."""


class ExportError(PointrtError):
    """``pointrt.export`` could not write a valid file (unsupported opset, exporter failure)."""


class VerificationError(PointrtError):
    """The exported file ran, but its outputs differ from PyTorch beyond the tolerance."""
