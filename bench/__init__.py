"""The benchmarks that the project ships (`make bench ARGS="..."`, see __main__.py), kept out of the app packages:
production code has no benchmark hooks, and these modules only call the services as any client would."""
