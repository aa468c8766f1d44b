import subprocess
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from embedded_stack.backup import restore


class Command(BaseCommand):
    help = ("Restore a `backup` file as the owner role, into a new database, or beside an existing one that it then "
            "replaces (the old one is kept, renamed). Stop the server first.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("file")
        parser.add_argument("--database", help="the database to restore into (default: the configured one)")

    def handle(self, *args, file: str, database: str | None, **options) -> None:
        if not Path(file).is_file():
            raise CommandError(f"no such file: {file}")
        try:
            self.stdout.write(restore(db=settings.DATABASES["owner"], path=Path(file), database=database))
        except (RuntimeError, subprocess.CalledProcessError) as error:
            raise CommandError(str(error)) from error
