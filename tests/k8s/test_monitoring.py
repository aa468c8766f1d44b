"""k8s/monitoring in CI: the Prometheus Operator's resources (CRDs: not in the Kubernetes schemas, so checked by hand
like the CNPG Cluster), the network path of the scrape, the alerts and the Grafana dashboard. Every PromQL expression
goes through tests/support/promql.py and may name only the metrics the server exports (telemetry/metrics.py,
hygiene/gauges.py) with their labels; the route labels must be Django routes; each alert's runbook must be a heading
of k8s/README.md. Each check is a function returning its problems, so that the tests below can show it failing."""
import copy
import inspect
import json
import re

import pytest
from django.urls import Resolver404, resolve

from hygiene import gauges
from k8s.render import pod_spec, pod_template, render
from telemetry import metrics
from tests.support.k8s import ROOT, WORKLOADS
from tests.support.promql import PromQLError, parse

MONITORING = ROOT / "k8s" / "monitoring"
SECRET = "zero-memory-secrets"
SCRAPER_NAMESPACE = {"kubernetes.io/metadata.name": "monitoring"}
SCRAPER = {"app.kubernetes.io/name": "prometheus"}
# The metrics of the server and their labels (telemetry/metrics.py).
COUNTERS = {
    "zm_http_requests": {"route", "method", "status"},
    "zm_rate_limited": {"limit"},
    "zm_db_pool_timeouts": set(),
    "zm_db_lock_failures": {"route", "kind"},
    "zm_judge_calls": {"backend", "outcome"},
    "zm_judge_verdicts": {"judge", "relation"},
    "zm_judge_vllm_batches": {"outcome"},
    "zm_outbox_requeued": set(),
}
HISTOGRAMS = {
    "zm_http_request_duration_seconds": {"route", "method"},
    "zm_step_duration_seconds": {"operation", "step"},
    "zm_embedding_duration_seconds": {"backend"},
    "zm_job_duration_seconds": {"rq_job", "outcome"},
    "zm_job_wait_seconds": {"rq_job"},
    "zm_judge_duration_seconds": {"backend"},
}
GAUGES = {
    "zm_db_pool_max_connections": set(), "zm_db_pool_open_connections": set(), "zm_db_pool_in_use_connections": set(),
    "zm_db_pool_waiting_requests": set(), "zm_judge_breaker_open": set(), "zm_review_lag_seconds": set(),
    "zm_conflicts_open": set(), "zm_queue_jobs": {"queue", "state"},
}
TARGET_LABELS = {"job", "instance", "namespace", "pod", "container", "service", "endpoint"}  # added by the scrape
SERIES = {"up": set()}  # exposition name -> its own labels
SERIES |= {f"{name}_total": labels for name, labels in COUNTERS.items()}
SERIES |= {f"{name}_bucket": labels | {"le"} for name, labels in HISTOGRAMS.items()}
SERIES |= {f"{name}_{part}": labels for name, labels in HISTOGRAMS.items() for part in ("sum", "count")}
SERIES |= GAUGES
KNOWN_LABELS = set().union(*SERIES.values()) | TARGET_LABELS
SEVERITIES = {"critical", "warning", "info"}


@pytest.fixture(scope="module")
def prod() -> list[dict]:
    return render(ROOT / "k8s" / "overlays" / "prod")


def by(resources: list[dict], kind: str, name: str) -> dict:
    [found] = [r for r in resources if r["kind"] == kind and r["metadata"]["name"] == name]
    return found


def container(resource: dict, name: str) -> dict:
    return next(c for c in pod_spec(resource)["containers"] if c["name"] == name)


def pod_labels(resource: dict) -> dict[str, str]:
    return pod_template(resource)["metadata"]["labels"]


def readme_anchors() -> set[str]:
    """GitHub's anchors of k8s/README.md's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", (ROOT / "k8s" / "README.md").read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def expression_problems(expr: str) -> list[str]:
    """What is wrong with a PromQL expression: it does not parse, names a series or label the server does not
    export, or matches a route that is no Django route."""
    try:
        parsed = parse(expr)
    except PromQLError as error:
        return [f"{expr!r}: {error}"]
    problems = [f"unknown metric {name}" for name, _ in parsed.selectors if name not in SERIES]
    for name, labels in parsed.selectors:
        problems += [f"{name} has no label {label}" for label in set(labels) - SERIES.get(name, set()) - TARGET_LABELS]
        for route in labels.get("route", "").split("|") if "route" in labels else []:
            try:
                matched = resolve(f"/{route}").route
            except Resolver404:
                matched = None
            if matched != route:
                problems.append(f"route {route!r} is no Django route pattern (resolves to {matched!r})")
    problems += [f"unknown grouping label {label}" for label in parsed.grouping - KNOWN_LABELS]
    return problems


def alert_problems(rule: dict, anchors: set[str]) -> list[str]:
    name = rule.get("alert", "?")
    problems = [f"{name}: {problem}" for problem in expression_problems(rule.get("expr", ""))]
    if not re.fullmatch(r"\d+[smh]", str(rule.get("for", ""))):
        problems.append(f"{name}: no `for` duration")
    if rule.get("labels", {}).get("severity") not in SEVERITIES:
        problems.append(f"{name}: severity not one of {sorted(SEVERITIES)}")
    annotations = rule.get("annotations", {})
    problems += [f"{name}: no {key}" for key in ("summary", "description") if not annotations.get(key)]
    runbook = re.fullmatch(r"https://\S+/k8s/README\.md#([\w-]+)", annotations.get("runbook_url", ""))
    if not runbook or runbook.group(1) not in anchors:
        problems.append(f"{name}: runbook_url is not a heading of k8s/README.md")
    return problems


def dashboard_problems(dashboard: dict) -> list[str]:
    problems = []
    variables = dashboard.get("templating", {}).get("list", [])
    if not any(v["type"] == "datasource" and v["query"] == "prometheus" and v["name"] == "datasource"
               for v in variables):
        problems.append("no Prometheus data source variable `datasource`")
    ids = [panel["id"] for panel in dashboard["panels"]]
    if len(ids) != len(set(ids)):
        problems.append(f"panel ids repeat: {ids}")
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            continue
        if not panel.get("targets"):
            problems.append(f"{panel['title']}: no query")
        for item in [panel, *panel.get("targets", [])]:
            if item.get("datasource", {}).get("uid") != "${datasource}":
                problems.append(f"{panel['title']}: not on the datasource variable")
        for target in panel.get("targets", []):
            problems += [f"{panel['title']}: {problem}" for problem in expression_problems(target["expr"])]
    return problems


def expressions(dashboard: dict) -> list[str]:
    return [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]


def rules(resources: list[dict]) -> list[dict]:
    return [rule for group in by(resources, "PrometheusRule", "zero-memory")["spec"]["groups"]
            for rule in group["rules"]]


def test_prod_renders_the_monitoring_and_dev_leaves_it_out(prod):
    kinds = {r["kind"] for r in prod if r["apiVersion"].startswith("monitoring.coreos.com/")}
    assert kinds == {"ServiceMonitor", "PodMonitor", "PrometheusRule"}
    dev = render(ROOT / "k8s" / "overlays" / "dev")
    assert not [r for r in dev if r["apiVersion"].startswith("monitoring.coreos.com/")]
    for resource in prod:  # the CRDs' required fields and the namespace of the Secret they read
        if resource["apiVersion"] == "monitoring.coreos.com/v1":
            assert resource["metadata"]["namespace"] == "zero-memory"
            assert set(resource["spec"]) <= {"jobLabel", "selector", "endpoints", "podMetricsEndpoints", "groups"}


def test_the_service_monitor_scrapes_the_web_pods_port_with_the_token(prod):
    monitor = by(prod, "ServiceMonitor", "zero-memory-web")
    services = [r for r in prod if r["kind"] == "Service"
                and monitor["spec"]["selector"]["matchLabels"].items() <= r["metadata"].get("labels", {}).items()]
    assert [s["metadata"]["name"] for s in services] == ["zero-memory-web"]
    service, web = services[0], by(prod, "Deployment", "zero-memory-web")
    assert service["spec"]["selector"].items() <= pod_labels(web).items()
    [endpoint] = monitor["spec"]["endpoints"]
    [port] = [p for p in service["spec"]["ports"] if p["name"] == endpoint["port"]]
    # The Service's port leads to the container port the app serves /metrics on, the one the server listens on.
    [http] = [p for p in container(web, "web")["ports"] if p["name"] == port["targetPort"]]
    assert str(http["containerPort"]) in container(web, "web")["command"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["authorization"] == {"type": "Bearer", "credentials": {"name": SECRET, "key": "METRICS_TOKEN"}}
    assert monitor["spec"]["jobLabel"] in service["metadata"]["labels"]


def test_the_judge_monitor_scrapes_vllms_own_metrics_on_the_judge_service(prod):
    """vLLM serves /metrics on its API port without a key (tests/hygiene/test_real_vllm.py reads them there)."""
    monitor = by(prod, "ServiceMonitor", "zero-memory-judge")
    services = [r for r in prod if r["kind"] == "Service"
                and monitor["spec"]["selector"]["matchLabels"].items() <= r["metadata"].get("labels", {}).items()]
    assert [s["metadata"]["name"] for s in services] == ["zero-memory-judge"]
    [endpoint] = monitor["spec"]["endpoints"]
    [port] = [p for p in services[0]["spec"]["ports"] if p["name"] == endpoint["port"]]
    [http] = [p for p in container(by(prod, "Deployment", "zero-memory-judge"), "vllm")["ports"]
              if p["name"] == port["targetPort"]]
    assert http["containerPort"] == 8000 and endpoint["path"] == "/metrics" and "authorization" not in endpoint
    assert monitor["spec"]["jobLabel"] in services[0]["metadata"]["labels"]


def test_the_pod_monitor_scrapes_the_workers_metrics_port_with_the_token(prod):
    monitor = by(prod, "PodMonitor", "zero-memory-worker")
    selector = monitor["spec"]["selector"]["matchLabels"]
    workloads = [r for r in prod if r["kind"] in WORKLOADS and selector.items() <= pod_labels(r).items()]
    assert [w["metadata"]["name"] for w in workloads] == ["zero-memory-worker"]
    worker = container(workloads[0], "worker")
    [endpoint] = monitor["spec"]["podMetricsEndpoints"]
    [port] = [p for p in worker["ports"] if p["name"] == endpoint["port"]]
    env = {e["name"]: e for e in worker["env"]}
    assert port["containerPort"] == int(env["METRICS_PORT"]["value"])  # where the worker serves them
    assert endpoint["path"] == "/metrics"
    assert endpoint["authorization"] == {"type": "Bearer", "credentials": {"name": SECRET, "key": "METRICS_TOKEN"}}
    assert monitor["spec"]["jobLabel"] in pod_labels(workloads[0])


def test_web_and_worker_get_the_token_and_a_writable_metrics_directory(prod):
    readme = (ROOT / "k8s" / "README.md").read_text()
    assert "--from-literal=METRICS_TOKEN=" in readme  # the Secret as the README creates it holds the key
    for name, app in (("zero-memory-web", "web"), ("zero-memory-worker", "worker")):
        workload = by(prod, "Deployment", name)
        env = {e["name"]: e for e in container(workload, app)["env"]}
        assert env["METRICS_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": SECRET, "key": "METRICS_TOKEN"}
        # The root filesystem is read-only: the processes' metric files need a volume of their own.
        assert container(workload, app)["securityContext"]["readOnlyRootFilesystem"] is True
        mounts = {m["mountPath"]: m["name"] for m in container(workload, app)["volumeMounts"]}
        volumes = {v["name"]: v for v in pod_spec(workload)["volumes"]}
        assert "emptyDir" in volumes[mounts[env["PROMETHEUS_MULTIPROC_DIR"]["value"]]]


def admitted(policies: list[dict], pod: dict[str, str], port: int, namespace: dict[str, str],
             peer: dict[str, str]) -> bool:
    """Whether the NetworkPolicies of the app's namespace let a pod labelled `peer` in a namespace labelled
    `namespace` reach `port` of a pod labelled `pod` (Kubernetes' rules, for the selectors used here)."""
    own_namespace = namespace.get("kubernetes.io/metadata.name") == "zero-memory"
    chosen = [p for p in policies if p["spec"]["podSelector"].get("matchLabels", {}).items() <= pod.items()]

    def matches(source: dict) -> bool:
        if "namespaceSelector" in source:
            in_namespace = source["namespaceSelector"]["matchLabels"].items() <= namespace.items()
        else:
            in_namespace = own_namespace
        return in_namespace and source.get("podSelector", {}).get("matchLabels", {}).items() <= peer.items()

    return not chosen or any(
        (not rule.get("ports") or any(p["port"] == port for p in rule["ports"]))
        and (not rule.get("from") or any(matches(source) for source in rule["from"]))
        for policy in chosen for rule in policy["spec"].get("ingress", []))


def test_only_prometheus_reaches_the_metrics_ports(prod):
    policies = [r for r in prod if r["kind"] == "NetworkPolicy"]
    web = pod_labels(by(prod, "Deployment", "zero-memory-web"))
    worker = pod_labels(by(prod, "Deployment", "zero-memory-worker"))
    app_namespace = {"kubernetes.io/metadata.name": "zero-memory"}
    assert admitted(policies, web, 8000, SCRAPER_NAMESPACE, SCRAPER)
    assert admitted(policies, worker, 9100, SCRAPER_NAMESPACE, SCRAPER)
    judge = pod_labels(by(prod, "Deployment", "zero-memory-judge"))
    assert admitted(policies, judge, 8000, SCRAPER_NAMESPACE, SCRAPER)  # vLLM's own /metrics
    assert admitted(policies, judge, 8000, app_namespace, worker)
    assert not admitted(policies, judge, 8000, app_namespace, web)
    assert not admitted(policies, judge, 8000, SCRAPER_NAMESPACE, {"app.kubernetes.io/name": "grafana"})
    # Nobody else reaches the workers' port, and Prometheus reaches nothing else of theirs, nor the data.
    assert not admitted(policies, worker, 9100, SCRAPER_NAMESPACE, {"app.kubernetes.io/name": "grafana"})
    assert not admitted(policies, worker, 9100, {"kubernetes.io/metadata.name": "default"}, SCRAPER)
    assert not admitted(policies, worker, 9100, app_namespace, web)
    assert not admitted(policies, worker, 8000, SCRAPER_NAMESPACE, SCRAPER)
    redis = pod_labels(by(prod, "Deployment", "zero-memory-redis"))
    assert not admitted(policies, redis, 6379, SCRAPER_NAMESPACE, SCRAPER)
    assert not admitted(policies, {"cnpg.io/cluster": "zero-memory-db"}, 5432, SCRAPER_NAMESPACE, SCRAPER)
    # The control case: the evaluation does let the app reach what it should.
    assert admitted(policies, redis, 6379, app_namespace, worker)
    added = [r["metadata"]["name"] for r in render(MONITORING) if r["kind"] == "NetworkPolicy"]
    assert added == ["zero-memory-worker-metrics", "zero-memory-judge-metrics"]


def test_every_alert_is_complete_and_names_only_exported_metrics(prod):
    anchors = readme_anchors()
    assert {rule["alert"] for rule in rules(prod)} >= {
        "ZeroMemoryTargetDown", "ZeroMemoryRequestLatencyHigh", "ZeroMemoryServerErrors", "ZeroMemoryReviewLag",
        "ZeroMemoryQueueBacklog", "ZeroMemoryJudgeBreakerOpen", "ZeroMemoryDbPoolSaturated",
        "ZeroMemoryDbPoolWaiting", "ZeroMemoryJobFailures", "ZeroMemoryLockFailures"}
    assert len({rule["alert"] for rule in rules(prod)}) == len(rules(prod))
    assert [problem for rule in rules(prod) for problem in alert_problems(rule, anchors)] == []


def test_the_target_down_alert_watches_the_jobs_the_monitors_make(prod):
    web_service = by(prod, "Service", "zero-memory-web")
    judge_service = by(prod, "Service", "zero-memory-judge")
    jobs = {web_service["metadata"]["labels"][by(prod, "ServiceMonitor", "zero-memory-web")["spec"]["jobLabel"]],
            pod_labels(by(prod, "Deployment", "zero-memory-worker"))[
                by(prod, "PodMonitor", "zero-memory-worker")["spec"]["jobLabel"]],
            judge_service["metadata"]["labels"][by(prod, "ServiceMonitor", "zero-memory-judge")["spec"]["jobLabel"]]}
    [down] = [rule for rule in rules(prod) if rule["alert"] == "ZeroMemoryTargetDown"]
    [(_, labels)] = parse(down["expr"]).selectors
    assert set(labels["job"].split("|")) == jobs


def test_the_dashboard_ships_loads_and_shows_every_metric(prod):
    shipped = by(prod, "ConfigMap", "zero-memory-grafana-dashboard")
    assert shipped["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = json.loads(shipped["data"]["grafana-dashboard.json"])
    assert dashboard_problems(dashboard) == []
    shown = {name for expr in expressions(dashboard) for name, _ in parse(expr).selectors}
    families = {**COUNTERS, **HISTOGRAMS, **GAUGES}
    assert {family for family in families if not any(name.startswith(family) for name in shown)} == set()


@pytest.mark.parametrize("expr, problem", [
    ("rate(zm_http_request_total[5m])", "unknown metric zm_http_request_total"),
    ("sum(rate(zm_http_requests_total[5m])", "not closed"),
    ("sum(rate(zm_http_requests_total[5m])))", "unopened"),
    ("rates(zm_http_requests_total[5m])", "unknown function"),
    ("rate(zm_http_requests_total[5 minutes])", "not a range"),
    ('zm_http_requests_total{status=5}', "not a label matcher"),
    ('zm_http_requests_total{stauts="500"}', "has no label stauts"),
    ('zm_job_wait_seconds_count{job="review"} > 0', ""),  # `job` is the target's: allowed
    ('sum by (exported_job) (zm_job_wait_seconds_count)', "unknown grouping label exported_job"),
    ('zm_http_requests_total{route="api/v1/memory"}', "is no Django route"),
    ('{__name__="zm_conflicts_open"}', "without a metric name"),
])
def test_the_expression_check_can_fail(expr, problem):
    problems = expression_problems(expr)
    assert any(problem in p for p in problems) if problem else problems == []


def test_the_alert_and_dashboard_checks_can_fail(prod):
    anchors = readme_anchors()
    rule = copy.deepcopy(rules(prod)[0])
    assert alert_problems(rule, anchors) == []
    rule["annotations"]["runbook_url"] = rule["annotations"]["runbook_url"] + "-missing"
    del rule["labels"]["severity"], rule["for"]
    assert len(alert_problems(rule, anchors)) == 3
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    dashboard["panels"][2]["id"] = dashboard["panels"][1]["id"]
    dashboard["panels"][1]["targets"][0]["expr"] = "rate(zm_unknown_total[5m])"
    dashboard["templating"]["list"] = []
    assert len(dashboard_problems(dashboard)) == 3


def test_the_metric_contract_is_the_servers():
    """The names and labels above are those telemetry/metrics.py declares (and hygiene/gauges.py reads at scrape
    time): an alert or a panel cannot silently watch a metric that was renamed."""
    declared = {m._name: (m._type, set(m._labelnames)) for m in vars(metrics).values() if hasattr(m, "_labelnames")}
    contract = {**{name: ("counter", labels) for name, labels in COUNTERS.items()},
                **{name: ("histogram", labels) for name, labels in HISTOGRAMS.items()},
                **{name: ("gauge", labels) for name, labels in GAUGES.items()}}
    scraped = {"zm_review_lag_seconds", "zm_conflicts_open", "zm_queue_jobs"}
    assert declared == {name: kind for name, kind in contract.items() if name not in scraped}
    assert scraped <= set(inspect.getsource(gauges).split('"'))
