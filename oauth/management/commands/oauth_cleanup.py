"""`manage.py oauth_cleanup`: what OAuth leaves behind, removed on a schedule (hourly CronJob in k8s/base).

Expired authorization codes, access tokens and refresh tokens (and revoked refresh tokens) go through
django-oauth-toolkit's own ``clear_expired``; registered clients that never got a code or a token within
OAUTH_UNUSED_CLIENT_DAYS go too (open registration lets anyone add one). Prints what it removed."""
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken, clear_expired


class Command(BaseCommand):
    help = "Remove expired OAuth codes and tokens, and registered clients that were never used."

    def handle(self, *args, **options) -> None:
        models = (Grant, AccessToken, RefreshToken)
        before = [model.objects.count() for model in models]
        clear_expired()
        removed = [count - model.objects.count() for count, model in zip(before, models)]
        cutoff = timezone.now() - timedelta(days=settings.OAUTH_UNUSED_CLIENT_DAYS)
        unused = Application.objects.filter(created__lt=cutoff, grant__isnull=True, accesstoken__isnull=True,
                                            refreshtoken__isnull=True)
        clients = unused.delete()[1].get(Application._meta.label, 0)
        self.stdout.write(f"oauth_cleanup: removed {removed[0]} expired codes, {removed[1]} access tokens, "
                          f"{removed[2]} refresh tokens and {clients} unused clients")
