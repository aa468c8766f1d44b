"""Turn a ``postgres://user:pass@host:port/name`` URL into a Django DATABASES entry."""
from urllib.parse import unquote, urlsplit


def database_from_url(url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError(f"Unsupported database URL scheme {parts.scheme!r}: use postgres://")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }
