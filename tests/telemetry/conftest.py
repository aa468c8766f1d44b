import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.hygiene.conftest import queue, work  # noqa: F401 - the real queue and worker of the review tests
from tests.support.tenants import build_tenant

SCRAPE_TOKEN = "scrape-token-for-tests"


def parse(text: str) -> dict[tuple[str, tuple], float]:
    """Prometheus text, read by prometheus-client's own parser: {(sample name, sorted labels): value}."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def scrape(client, settings):
    """GET /metrics with the scrape token, parsed."""
    settings.METRICS_TOKEN = SCRAPE_TOKEN

    def read() -> dict:
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {SCRAPE_TOKEN}")
        assert response.status_code == 200, response.content
        return parse(response.content.decode())

    return read


@pytest.fixture
def acme(committed):
    return build_tenant("acme")
