"""The HTTP plumbing every entry point shares: the error envelope, strict fields and parsers, the OpenAPI schema
class, the whole-body reader, the security headers, the health check and the step timer. It imports no app."""
