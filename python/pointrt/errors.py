"""Errors raised by the pointrt Python package.

Every error pointrt raises is a :class:`pointrt.Error`: the runtime's (loading, preparing,
running a model, converting inputs) are :class:`SessionError`, which is also a ``RuntimeError``;
the exporter's are :class:`ExportError` and :class:`VerificationError`.
"""


class Error(Exception):
    """Base class of every pointrt error."""


PointrtError = Error  # the earlier name


class SessionError(Error, RuntimeError):
    """The runtime refused a model or an input; the message is one line naming the file, node,
    tensor and value (``pointrt._pointrt.Error`` is this class)."""


class ExportError(Error):
    """``pointrt.export`` could not write a valid file (unsupported opset, exporter failure)."""


class VerificationError(Error):
    """The exported file ran, but its outputs differ from PyTorch beyond the tolerance."""
