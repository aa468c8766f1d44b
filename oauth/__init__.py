"""The OAuth 2.1 authorization server that MCP's authorization spec asks for: a client given only this server's URL
finds the rest (RFC 9728, RFC 8414), registers itself (RFC 7591), has a person approve it in the web admin, and gets
tokens bound to this server (RFC 8707) that mean what a minted token means.

On django-oauth-toolkit (its models, oauthlib's grant logic, the token and revocation endpoints) with our own parts:

- ``metadata``: the two discovery documents, built from PUBLIC_URL;
- ``registration``: open dynamic client registration for public clients, rate limited per address and size limited,
  redirect URIs limited to loopback http and https;
- ``consent``: the authorize endpoint, behind the web sign-in, where the person picks the organization, optionally a
  project, and read or read-and-write access; approval writes a grant row (tenants.ApiToken without a secret) that
  ties the client's tokens to that organization, user and project;
- ``validator``: oauthlib's validator, taught to run as the grant's user (users are under row-level security) and to
  carry the grant from the code to its tokens through refresh-token families.

tenants/auth.py resolves the access tokens (by their SHA-256; the toolkit stores no token in clear here).
"""
