"""A suite file's bytes as text: UTF-8 (a byte-order mark allowed), or a DataError naming the file and line."""
from __future__ import annotations

from muttlab.errors import DataError


def decode(data: bytes, name: str) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped).

    Raises:
      DataError: not UTF-8, naming ``name``, the line of the first bad byte and the byte.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(name, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", line=line,
                        fix="re-save the file as UTF-8") from None
