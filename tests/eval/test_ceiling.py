"""The model ceiling printed beside the retrieval table: perfect supersession, meaning alone, the real embedding model."""
from bench.ceiling import ceiling


def memory(key, content, user="ann", project="web", kind="fact", supersedes=(), replaces=()):
    return {"key": key, "user": user, "project": project, "kind": kind, "content": content,
            "supersedes": list(supersedes), "replaces_undeclared": list(replaces)}


def query(answers, text, user="ann", type_="declared_supersede", **filters):
    return {"user": user, "type": type_, "query": text, "answers": answers, **filters}


DATASET = {
    "users": {"ann": {"projects": ["web"]}, "bo": {"projects": []}},
    "memories": [
        memory("deploy-1", "The storefront deploys every Monday at 09:00 UTC."),
        memory("deploy-2", "Release train moved: Thursdays, mid-afternoon.", supersedes=["deploy-1"]),
        memory("coffee", "The office coffee machine is on the third floor."),
        memory("bo-note", "Bo deploys the storefront on Mondays by hand.", user="bo", project=None),
        memory("ann-task", "Ship the storefront release notes.", kind="task"),
    ],
}


def test_an_earlier_versions_match_counts_for_the_current_version_and_the_stale_one_is_never_a_candidate():
    dataset = {**DATASET, "queries": [query(["deploy-2"], "When does the storefront deploy on Monday?")]}
    assert ceiling(dataset) == {"declared_supersede": 1.0, "overall": 1.0}


def test_only_what_the_user_may_see_with_the_query_filters_is_ranked():
    dataset = {**DATASET, "queries": [
        query(["bo-note"], "Who deploys the storefront on Mondays?", user="bo", type_="personal"),
        query(["ann-task"], "When does the storefront deploy?", type_="stable_fact", kinds=["task"]),
        query(["deploy-2"], "Where is the coffee machine?", type_="stable_fact"),
    ]}
    assert ceiling(dataset) == {"overall": 0.667, "personal": 1.0, "stable_fact": 0.5}


def test_a_previous_value_question_ranks_the_earlier_versions_themselves_without_the_current_one():
    asked = {**query(["deploy-1"], "Which weekday did the storefront deploy on before?", type_="previous_value"),
             "current": ["deploy-2"]}
    current = query(["deploy-1"], "Which weekday did the storefront deploy on before?", type_="declared_supersede")
    # The same words: history finds the old version; a current-value question can only ever credit its successor.
    assert ceiling({**DATASET, "queries": [asked]}) == {"overall": 1.0, "previous_value": 1.0}
    assert ceiling({**DATASET, "queries": [current]}) == {"declared_supersede": 0.0, "overall": 0.0}
