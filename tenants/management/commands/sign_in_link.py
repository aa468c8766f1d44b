from django.core.management.base import BaseCommand, CommandError

from tenants import rls
from tenants.models import User
from tenants.services import id_lookup
from tenants.sign_in import sign_in_link


class Command(BaseCommand):
    help = "Print a one-time web sign-in link for a member of an organization (valid for SIGN_IN_LINK_HOURS)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument("--email", required=True, help="the member's email")

    def handle(self, *args, org: str, email: str, **options) -> None:
        org_id = id_lookup("zm_org_id_for_slug", org)
        user_id = id_lookup("zm_user_id_for_email", email.strip().lower())
        if org_id is None or user_id is None:
            raise CommandError(f"no member {email} in organization {org}")
        with rls.tenant_scope(rls.Scope(org_id=org_id, user_id=user_id)):
            try:
                self.stdout.write(sign_in_link(user_id, org_id, may_reset=True))
            except User.DoesNotExist as error:  # a user, but not a member of that organization
                raise CommandError(f"no member {email} in organization {org}") from error
