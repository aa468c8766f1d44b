import json

from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email, validate_slug
from django.core.exceptions import ValidationError

from tenants import rls
from tenants.services import StorageBusy, org_bootstrap
from tenants.sign_in import sign_in_link


class Command(BaseCommand):
    help = ("Create an organization, its admin and projects where missing, and print a new admin token and a one-time "
            "web sign-in link (sign_in_url) as one JSON line.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument("--admin", required=True, help="admin email")
        parser.add_argument("--project", action="append", default=[], help="project slug (repeatable)")

    def handle(self, *args, org: str, admin: str, project: list[str], **options) -> None:
        try:
            validate_slug(org)
            validate_email(admin)
            for slug in project:
                validate_slug(slug)
        except ValidationError as error:
            raise CommandError(f"invalid argument: {error.messages[0]}")
        try:
            result = org_bootstrap(org_slug=org, admin_email=admin, project_slugs=project)
        except StorageBusy as error:
            raise CommandError(str(error)) from error
        with rls.tenant_scope(rls.Scope(org_id=result.org.id, user_id=result.user.id)):
            url = sign_in_link(result.user.id, result.org.id, may_reset=True)
        line = {
            "org": result.org.slug,
            "user": result.user.email,
            "user_id": str(result.user.id),
            "token": result.secret,
            "token_id": result.token.id,
            "projects": [p.slug for p in result.projects],
            "sign_in_url": url,
        }
        self.stdout.write(json.dumps(line))
