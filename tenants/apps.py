from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from tenants import schema  # noqa: F401  (registers the OpenAPI authentication extensions)
        from tenants.db_roles import grant_app_role

        post_migrate.connect(grant_app_role, sender=self)
