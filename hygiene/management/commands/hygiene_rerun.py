from datetime import timedelta

from django.core.management.base import BaseCommand

from memory.models import Review
from memory.outbox import flush


class Command(BaseCommand):
    help = "Queue again the reviews whose judge was unavailable after every retry (and stale running ones)."

    def handle(self, *args, **options) -> None:
        queued = flush(older_than=timedelta(0), states=(Review.State.UNAVAILABLE, Review.State.RUNNING))
        self.stdout.write(f"queued {queued} review(s) again")
