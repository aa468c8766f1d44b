"""The embedded stack of `make run` and `make test`: Postgres and Redis as child processes, the launcher that starts
them before the server, the tests or a bench, and database backup and restore. It imports no app."""
