"""`MissingDataError`: a corpus file is not there (and could not be fetched)."""


class MissingDataError(ValueError, FileNotFoundError):
    """Raised when corpus files are missing; the message says how to provide them.

    It is both a `ValueError` (bad input) and a `FileNotFoundError`, so either catches it.
    """
