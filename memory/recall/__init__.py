"""recall (API.md): hybrid retrieval that prefers current facts and keeps history inspectable. search.py runs it;
channels.py finds and fuses candidates; ordering.py places and annotates what is returned; query.py holds the types."""
from memory.recall.query import Hit, RecallQuery, RecallResult
from memory.recall.search import memory_recall

__all__ = ["Hit", "RecallQuery", "RecallResult", "memory_recall"]
