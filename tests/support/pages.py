"""A Django test client signed in to the web pages, as a session login leaves it (tenants/sign_in.py)."""
from django.test import Client

from tenants import rls
from tenants.auth import SESSION_ORG_KEY


def signed_in(tenant, user) -> Client:
    client = Client()
    with rls.tenant_scope(rls.Scope(org_id=tenant.org.id, user_id=user.id)):
        client.force_login(user)  # records last_login, as the user
    session = client.session
    session[SESSION_ORG_KEY] = str(tenant.org.id)
    session.save()
    return client
