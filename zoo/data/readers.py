"""Readers for plain parallel files and tab-separated pair files, with clear errors.

Every error names the file, the 1-based line number and what is wrong. Files ending in ".gz"
are decompressed (a damaged or truncated one is an error naming it). Lines end in LF or
CR LF; a file with old Mac line endings (CR alone) is refused (zoo.data.file_checks). Lines are stripped of
surrounding whitespace; control characters (NUL, escape, the C1 range, ...: Unicode category
Cc, the tab of TSV files excepted) become spaces and are counted in a warning; pairs with an
empty side are dropped and counted in a warning.
"""

import gzip
import logging
import os
import re

from zoo.data.errors import MissingDataError
from zoo.data.file_checks import GZIP_ERRORS, HEAD_BYTES, check_head, gzip_error, is_gzip
from zoo.data.fingerprint import note_read

logger = logging.getLogger("zoo.data")

# Unicode category Cc without tab, line feed and carriage return (handled as separators).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def read_lines(path):
    """Reads a UTF-8 text file as a list of lines (no line ends, surrounding spaces stripped).

    Raises MissingDataError when the file does not exist, ValueError on invalid UTF-8.
    Control characters become spaces (see the module docstring).
    """
    return [line.strip() for line in read_raw_lines(path)]


def read_raw_lines(path):
    """Reads a UTF-8 text file (gzip-compressed when its name ends in ".gz") as a list of
    lines; only the line ends ("\n", "\r\n") go, and control characters other than tab
    become spaces (counted in one warning). Raises ValueError naming the file when it has
    CR-only line ends or is a damaged gzip file."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{path} is a directory; expected a corpus file (UTF-8 text).")
    if not os.path.isfile(path):
        raise MissingDataError(f"Missing corpus file {path}.")
    note_read(path)
    with open(path, "rb") as f:
        data = f.read()
    if is_gzip(path):
        try:
            data = gzip.decompress(data)
        except GZIP_ERRORS as error:
            raise gzip_error(path, error) from None
    check_head(data[:HEAD_BYTES], path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for number, raw in enumerate(data.split(b"\n"), start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{path}, line {number}: invalid UTF-8 ({error.reason} at byte "
                    f"{error.start} of the line: {raw[max(0, error.start - 20) : error.end + 20]!r})."
                ) from None
        raise
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return _without_controls([line.removesuffix("\r") for line in lines], path)


def _without_controls(lines, path):
    changed = 0
    for i, line in enumerate(lines):
        if _CONTROL.search(line):
            lines[i] = _CONTROL.sub(" ", line)
            changed += 1
    if changed:
        logger.warning(
            "%s: replaced control characters (NUL, escape, ...) by spaces in %d of %d lines.",
            path,
            changed,
            len(lines),
        )
    return lines


def drop_empty(sources, targets, what):
    """Drops pairs with an empty side; logs how many were dropped. Returns two lists."""
    kept_s, kept_t = [], []
    for s, t in zip(sources, targets, strict=True):
        if s and t:
            kept_s.append(s)
            kept_t.append(t)
    dropped = len(sources) - len(kept_s)
    if dropped:
        logger.warning(
            "%s: dropped %d of %d pairs with an empty side.", what, dropped, len(sources)
        )
    return kept_s, kept_t


def read_parallel(source_path, target_path):
    """Reads two line-aligned files; returns (sources, targets) without empty pairs.

    Raises ValueError when the files have different line counts.
    """
    sources = read_lines(source_path)
    targets = read_lines(target_path)
    if len(sources) != len(targets):
        raise ValueError(
            f"Parallel files differ in length: {source_path} has {len(sources)} lines but "
            f"{target_path} has {len(targets)}; line i of one must translate line i of the other."
        )
    return drop_empty(sources, targets, f"{source_path} / {target_path}")


def read_tsv(path):
    """Reads `source<TAB>target` lines; returns (column0, column1) without empty pairs.

    A line must have exactly one tab. (The newer ManyThings files append a third
    `CC-BY ...` attribution column; such a column is accepted and ignored.)
    """
    column0, column1 = [], []
    for number, line in enumerate(read_raw_lines(path), start=1):
        first, second = tsv_fields(line, path, number)
        column0.append(first.strip())
        column1.append(second.strip())
    return drop_empty(column0, column1, os.fspath(path))


def tsv_fields(line, path, number):
    """The two columns of TSV line `number` of `path` (a third `CC-BY ...` column is
    dropped); raises ValueError naming file and line unless it has exactly one tab."""
    fields = line.split("\t")
    if len(fields) == 3 and fields[2].startswith("CC-BY"):
        fields = fields[:2]
    if len(fields) != 2:
        raise ValueError(
            f"{path}, line {number}: expected exactly one tab (source<TAB>target), found "
            f"{len(fields) - 1}: {line[:80]!r}."
        )
    return fields
