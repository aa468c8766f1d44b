from django.apps import AppConfig


class HygieneConfig(AppConfig):
    name = "hygiene"
    default_auto_field = "django.db.models.BigAutoField"
