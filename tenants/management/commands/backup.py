from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from embedded_stack.backup import backup, default_backup_path


class Command(BaseCommand):
    help = "Dump the database (every tenant, RLS policies, grants, functions, vectors) to one file, as the owner role."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", nargs="?", help="where to write it (default: backups/<database>-<UTC time>.dump)")

    def handle(self, *args, file: str | None, **options) -> None:
        db = settings.DATABASES["owner"]
        path = Path(file) if file else default_backup_path(db, settings.BASE_DIR / "backups")
        self.stdout.write(f"backed up {db['NAME']} to {backup(db=db, path=path)}")
