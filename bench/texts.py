"""Synthetic but realistic memories of an engineering organisation, for benchmarks (not for quality evaluation)."""
import random
import secrets

SERVICES = ["billing", "checkout", "search", "auth", "notifications", "reporting", "ingest", "payments", "profile",
            "inventory", "shipping", "recommendations", "gateway", "scheduler", "exports", "webhooks"]
PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Eitan", "Fatima", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lea"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
TOOLS = ["Postgres", "Redis", "Kafka", "Elasticsearch", "S3", "Celery", "RQ", "Grafana", "Sentry", "Terraform"]
TEMPLATES = [
    ("fact", "The {service} service deploys on {day} at {hour}:00 UTC."),
    ("fact", "{person} owns the {service} service and is its first on-call contact."),
    ("fact", "The {service} API rate limit is {n} requests per minute per token."),
    ("decision", "We decided to move {service} queues from {tool} to {tool2} to cut p95 latency."),
    ("lesson", "When {service} timeouts spike, check the {tool} connection pool before scaling pods."),
    ("diagnosis", "The {service} outage on {day} was caused by an expired TLS certificate on the {tool} proxy."),
    ("plan", "Next sprint: split {service} into read and write paths, owner {person}, target {n} rps."),
    ("task", "Rotate the {tool} credentials used by {service} before the end of the quarter."),
    ("preference", "{person} prefers reviews of {service} changes in small pull requests under {n} lines."),
    ("note", "Staging for {service} runs on cluster eu-{k}; production on eu-{k2} behind the {tool} gateway."),
    ("open-question", "Should {service} keep its own {tool} instance or share the platform one?"),
]


def synthetic_memory(rng: random.Random) -> tuple[str, str, str]:
    """(topic key, kind, content): the topic key groups versions of one fact, for declared supersedes."""
    index = rng.randrange(len(TEMPLATES))
    kind, template = TEMPLATES[index]
    service = rng.choice(SERVICES)
    values = {
        "service": service, "person": rng.choice(PEOPLE), "day": rng.choice(DAYS), "hour": rng.randrange(0, 24),
        "tool": rng.choice(TOOLS), "tool2": rng.choice(TOOLS), "n": rng.choice([50, 100, 200, 500, 1000, 5000]),
        "k": rng.randrange(1, 9), "k2": rng.randrange(1, 9),
    }
    return f"{index}:{service}", kind, template.format(**values)


def one_of_a_kind(content: str, tag: str) -> str:
    """``content`` made new with ``tag`` inside its one sentence, before the closing mark.

    A reused tenant must never absorb a bench's remember as a duplicate, and the remember must stay the one-sentence
    fact a writer sends. A tag after the full stop ("... UTC. (http bench 01JE..., Ana)") made each write two
    statements, so it was embedded three times and stored with two passages: the embedding took 24 of its 36 ms in
    process, against 9 for the fact alone.
    """
    return f"{content[:-1]} ({tag}){content[-1]}"


def run_tag() -> str:
    """Short, so that it adds a few tokens to the embedding, not the twenty of a ULID."""
    return secrets.token_hex(3)
