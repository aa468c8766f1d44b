"""Public identifiers: a type prefix plus a ULID (sortable by creation time, 26 Crockford base32 characters)."""
import os
import re
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid() -> str:
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"


_ID_SHAPE = r"_[0-9A-HJKMNP-TV-Z]{26}"


def is_id(value: str, prefix: str) -> bool:
    return re.fullmatch(prefix + _ID_SHAPE, value) is not None
