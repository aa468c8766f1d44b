"""Python client for the zero-memory REST API (/api/v1): `ZeroMemory` (sync) and `AsyncZeroMemory` (asyncio).

One method per API operation, named by its OpenAPI operationId; typed, frozen results (models); one exception class
per kind of failure (errors); retries that never repeat a write the server may have done (RetryPolicy).
"""
from ._core import RetryPolicy
from .aio import AsyncZeroMemory
from .client import ZeroMemory
from .errors import (
    BadRequest, ConflictError, ConnectionFailed, Forbidden, NotFound, PayloadTooLarge, RateLimited, ServerError,
    Timeout, Unauthorized, ZeroMemoryError,
)
from .models import (
    Check, Conflict, ConflictMemories, ConflictSummary, Disagreeing, Event, FeedPage, IssuedToken, Link, Me, Memory,
    MemoryDetail, Owner, OrgSettings, Project, ProjectMember, Provenance, RecallHit, RecallResult, RecallWarning,
    RecallWhy, RememberResult, SimilarMemory, SkippedLink, SourceResult, Stats, Token, User, UserRef,
)
from .params import FeedFields, LinkSpec, RecallFields, RememberFields

__version__ = "0.1.0"

__all__ = [
    "AsyncZeroMemory", "ZeroMemory", "RetryPolicy",
    "ZeroMemoryError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "ConflictError", "PayloadTooLarge",
    "RateLimited", "ServerError", "ConnectionFailed", "Timeout",
    "Memory", "Owner", "Provenance", "RememberResult", "SimilarMemory", "SkippedLink", "RecallResult", "RecallHit",
    "RecallWhy", "RecallWarning", "Disagreeing", "FeedPage", "MemoryDetail", "Link", "Event", "Check", "Conflict",
    "ConflictMemories", "ConflictSummary", "SourceResult", "Stats", "Token", "IssuedToken", "Project",
    "ProjectMember", "User", "UserRef", "Me", "OrgSettings",
    "RememberFields", "RecallFields", "FeedFields", "LinkSpec",
]
