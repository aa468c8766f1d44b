from django.core.management.base import BaseCommand, CommandError

from tenants.auth import token_identity


class Command(BaseCommand):
    help = "Exit 0 when the given token secret is valid (not revoked), 1 otherwise. Prints nothing secret."

    def add_arguments(self, parser) -> None:
        parser.add_argument("token")

    def handle(self, *args, token: str, **options) -> None:
        if token_identity(token) is None:
            raise CommandError("token is invalid or revoked")
        self.stdout.write("token is valid")
