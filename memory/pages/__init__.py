"""The memory pages of the web admin: the feed at /, a memory's page, open loops, sources.

Each is a TenantPage (tenants/pages.py): the same identity and one transaction as the API, the same services and
selectors as the REST views in memory/api/. Slow work (embedding a search or a correction) runs in prepare_<method>,
before the transaction.
"""
from memory.pages.detail import MemoryPage
from memory.pages.feed import FeedPage
from memory.pages.lists import LoopsPage, SourcePage, SourcesPage

__all__ = ["FeedPage", "LoopsPage", "MemoryPage", "SourcePage", "SourcesPage"]
