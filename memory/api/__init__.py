"""The memory domain's REST endpoints, one module per area."""
from memory.api.checks_sources import ChecksView, LoopsView, SourcesView, SourceVersionsView
from memory.api.memories import (
    ForgetView, LinksView, MemoriesView, MemoryDetailView, MemoryHistoryView, NamespacesView, PurgeView, RestoreView,
)
from memory.api.objects import MemoryOutput
from memory.api.recall import RecallView

__all__ = [
    "ChecksView", "ForgetView", "LinksView", "LoopsView", "MemoriesView", "MemoryDetailView", "MemoryHistoryView",
    "MemoryOutput", "NamespacesView", "PurgeView", "RecallView", "RestoreView", "SourceVersionsView", "SourcesView",
]
