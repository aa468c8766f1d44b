"""Organizations (tenants), their members, projects and API tokens.

Every table here except User is tenant-owned: it carries ``org`` and row-level security decides what a caller
sees (policies in migrations/0002_row_level_security.py). Users are global identities, because one person can be
a member of several organizations; their rows are also under RLS (visible only to fellow members).
"""
import uuid

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.db import models

from tenants.ids import new_id
from tenants.rls import TenantManager


class Organization(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    require_supersede_reason = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TenantManager()

    def __str__(self) -> str:
        return self.slug


class UserManager(BaseUserManager):
    def create_user(self, email: str, password: str | None = None, **extra) -> "User":
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password) if password else user.set_unusable_password()
        user.save(using=self._db)
        return user


class User(AbstractBaseUser):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    email = models.EmailField(unique=True)
    is_active = models.BooleanField(default=True)
    date_joined = models.DateTimeField(auto_now_add=True)

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    objects = UserManager()

    def __str__(self) -> str:
        return self.email


class Membership(models.Model):
    class Role(models.TextChoices):
        ADMIN = "admin"
        MEMBER = "member"

    org = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TenantManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "user"], name="membership_org_user_uniq")]


class Project(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="projects")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TenantManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "slug"], name="project_org_slug_uniq")]

    def __str__(self) -> str:
        return self.slug


class ProjectMember(models.Model):
    org = models.ForeignKey(Organization, on_delete=models.PROTECT)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="members")
    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="project_memberships")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TenantManager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "project", "user"], name="project_member_org_project_user_uniq")
        ]


def _token_id() -> str:
    return new_id("tok")


class ApiToken(models.Model):
    class Writer(models.TextChoices):
        AGENT = "agent"  # authoritative
        HUMAN = "human"  # authoritative
        WATCHER = "watcher"  # provisional background writer

    id = models.CharField(primary_key=True, max_length=40, default=_token_id, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="tokens")
    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="tokens")
    name = models.CharField(max_length=200)
    writer = models.CharField(max_length=16, choices=Writer.choices)
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.PROTECT)
    # sha256 of the secret: secrets are long random strings, so a fast hash is enough and lookup stays O(1).
    # Null for a grant to an OAuth client, which has no secret of its own: its access tokens are the OAuth ones.
    secret_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    # A grant to an OAuth client (oauth/): the client, whether it may only read, and the family of its refresh
    # tokens (django-oauth-toolkit's token_family, kept through every rotation), which ties each of the client's
    # access tokens to this row. Revoking the row ends them all. No foreign key in the database: tenants_apitoken is
    # a Citus reference table (tenants/migrations/_citus.py), which may only reference other reference tables, and
    # the toolkit's tables are the authorization server's own, not the tenants'.
    application = models.ForeignKey(settings.OAUTH2_PROVIDER_APPLICATION_MODEL, null=True, blank=True,
                                    on_delete=models.PROTECT, related_name="+", db_constraint=False)
    read_only = models.BooleanField(default=False)
    oauth_family = models.UUIDField(null=True, blank=True, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = TenantManager()

    class Meta:
        indexes = [models.Index(fields=["org", "user"], name="token_org_user_idx")]

    @property
    def is_authoritative(self) -> bool:
        return self.writer != self.Writer.WATCHER

    @property
    def is_oauth(self) -> bool:
        return self.application_id is not None
