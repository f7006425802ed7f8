"""One exception tree for everything dlfuzz raises on purpose.

``UsageError`` is the user's to fix (bad argument, unknown backend, foreign directory);
the CLI prints it as one line and exits 2. ``InternalError`` is a bug in dlfuzz itself;
it is never swallowed and never turned into a finding against a library.
"""


class DlfuzzError(Exception):
    """Root of every exception dlfuzz raises deliberately."""


class UsageError(DlfuzzError):
    """Bad input from the user: the message names the thing, its value and the fix."""


class InternalError(DlfuzzError):
    """A bug in dlfuzz. Never reported as a bug of a library under test."""


class Rejected(DlfuzzError):
    """A generator or mutation refused to produce a case; the caller retries."""
