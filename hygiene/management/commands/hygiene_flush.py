import time
from datetime import timedelta

from django.core.management.base import BaseCommand

from memory.outbox import flush


class Command(BaseCommand):
    help = ("Queue the reviews still pending in the outbox (after a Redis outage) and those left running by a dead "
            "worker (stale after HYGIENE_STALE_RUN_SECONDS). --every N repeats every N seconds.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--every", type=int, default=0, help="repeat every N seconds (0: once)")
        parser.add_argument("--older-than", type=int, default=30, help="only reviews pending this many seconds")

    def handle(self, *args, every: int, older_than: int, **options) -> None:
        while True:
            queued = flush(older_than=timedelta(seconds=older_than))
            if queued or not every:
                self.stdout.write(f"queued {queued} review(s)")
            if not every:
                return
            time.sleep(every)
