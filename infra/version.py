"""The running release."""

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("svc")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0.0.0+source"
