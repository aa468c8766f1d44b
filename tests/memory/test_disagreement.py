"""Read-time disagreement (memory/disagreement.py, API.md "Read-time disagreement"), seen through recall.

Two live memories that give different values for the same thing are both flagged `disagrees`, each naming the other
and when it was written; the newer comes first only where it says in words that it is an update. Nothing is retired
or queued by it, and it holds under `as_of` as of then.
"""
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.utils import timezone

from memory import disagreement


def ids(body: dict) -> list[str]:
    return [r["memory"]["id"] for r in body["results"]]


def _result(body: dict, memory_id: str) -> dict:
    return next(r for r in body["results"] if r["memory"]["id"] == memory_id)


def test_a_change_in_passing_without_a_marker_is_shown_as_a_disagreement(remember, recall, api, acme):
    old = remember(acme.member_token, "Can you look at the release script? It fails on the tag step. "
                                      "The launch is on March 3, marketing is lined up.")["memory"]
    new = remember(acme.member_token, "Thanks, the script works. We launch on March 17 with the partners, "
                                      "the press kit is ready.")["memory"]
    body = recall(acme.member_token, "When is the launch?")
    first, second = _result(body, old["id"]), _result(body, new["id"])
    assert "disagrees" in first["flags"] and "disagrees" in second["flags"]
    assert first["disagrees_with"] == [{"id": new["id"], "created_at": new["created_at"]}]
    assert second["disagrees_with"] == [{"id": old["id"], "created_at": old["created_at"]}]
    assert f"disagrees with {new['id']}" in first["why"]["note"] and "neither says which is current" in \
        first["why"]["note"]
    pairs = body["trace"]["disagreements"]["pairs"]
    assert pairs == [{"newer": new["id"], "older": old["id"], "values": "date: 3/3 against 3/17",
                      "update_marker": None}]
    # Read-time evidence only: both stay live, no conflict is opened.
    for memory_id in (old["id"], new["id"]):
        assert api(acme.member_token).get(f"/api/v1/memories/{memory_id}").json()["memory"]["status"] == "live"
    assert api(acme.member_token).get("/api/v1/conflicts").json()["results"] == []


def test_an_update_that_says_it_is_one_comes_before_what_it_updates(remember, recall, acme):
    # The question is worded like the old statement, so relevance alone ranks the old one first.
    old = remember(acme.member_token, "The Pro plan price is 29 euros per month for every seat.")["memory"]["id"]
    new = remember(acme.member_token, "Finance call went fine. Pricing changed to 35 euros.")["memory"]["id"]
    body = recall(acme.member_token, "What is the Pro plan price per month for a seat?")
    assert ids(body)[:2] == [new, old]
    assert f"ranked before {old}" in _result(body, new)["why"]["note"]
    assert f"probably updated by {new}" in _result(body, old)["why"]["note"]
    assert "changed to" in _result(body, old)["why"]["note"]
    # A reader of the history (often asking what the value was before) gets relevance order; the flags stay.
    history = recall(acme.member_token, "What is the Pro plan price per month for a seat?", include_history=True)
    assert ids(history)[:2] == [old, new] and "disagrees" in _result(history, new)["flags"]


def test_without_a_marker_the_newer_keeps_its_relevance_place(remember, recall, acme):
    """Age alone never moves a memory: the same pair, the newer without a word of change, stays second."""
    old = remember(acme.member_token, "The Pro plan price is 29 euros per month for every seat.")["memory"]["id"]
    new = remember(acme.member_token, "Finance call went fine. Pricing is 35 euros.")["memory"]["id"]
    body = recall(acme.member_token, "What is the Pro plan price per month for a seat?")
    assert ids(body)[:2] == [old, new]
    assert "disagrees" in _result(body, old)["flags"]


def test_statements_that_share_no_word_with_the_question_are_read_by_meaning(remember, recall, acme):
    """"overnight job begin" against "nightly loads start" / "nightly batch kicks off": no word of the question in
    either answer, so only the statements' vectors say both answer it (and are about the same thing)."""
    old = remember(acme.member_token, "Please review the backup runbook. The nightly batch kicks off at 1 am UTC.")
    new = remember(acme.member_token, "Our nightly loads start at 3:30 UTC so they don't clash with the backups.")
    body = recall(acme.member_token, "What time does the overnight job begin?")
    assert {old["memory"]["id"], new["memory"]["id"]} <= set(ids(body))
    assert body["trace"]["disagreements"]["pairs"] == [{
        "newer": new["memory"]["id"], "older": old["memory"]["id"], "values": "time: 1 am against 3:30",
        "update_marker": None}]


def test_facts_about_other_things_on_the_same_topic_are_not_flagged(remember, recall, acme):
    remember(acme.member_token, "The launch is on March 3, marketing is lined up.")
    remember(acme.member_token, "The launch checklist has 14 items and Priya owns it.")
    remember(acme.member_token, "Our launch party playlist is done.")
    body = recall(acme.member_token, "When is the launch?")
    assert all("disagrees" not in r["flags"] and r["disagrees_with"] == [] for r in body["results"])
    assert body["trace"]["disagreements"]["pairs"] == []


def test_as_of_reads_the_disagreement_as_it_stood_then(remember, recall, acme):
    old = remember(acme.member_token, "The launch is on March 3, marketing is lined up.")["memory"]["id"]
    before = timezone.now()
    new = remember(acme.member_token, "Heads up, the launch moved to March 17.")["memory"]["id"]
    then = recall(acme.member_token, "When is the launch?", as_of=before.isoformat())
    assert ids(then) == [old] and then["results"][0]["flags"] == []
    now = recall(acme.member_token, "When is the launch?")
    assert ids(now)[:2] == [new, old] and "disagrees" in _result(now, old)["flags"]


def test_values_are_read_by_type_from_the_sentence_that_answers():
    sentence = disagreement.answering(
        "Can you check my slides? The cutover moved to April 9, the 14 tests passed.", {"cutov"}, "date")
    assert sentence.values == {"date": frozenset({"4/9"}), "number": frozenset({"14 test"})}
    assert sentence.marked == "moved to"
    assert disagreement.expects("When do we cut over?") == "date"
    assert disagreement.expects("How much will the flat cost?") == "money"
    # Counts of different things are not two values of one thing; a question gives no value.
    days = disagreement.sentences("A/B tests run for at least 14 days.")[0]
    users = disagreement.sentences("A/B tests need 50,000 users per arm.")[0]
    assert disagreement.differing(days, users, "number") == {}
    # Whatever stands between the count and its unit: "thirteen and a half hours", "a 14-day trial".
    flight = disagreement.sentences("The flight takes about thirteen and a half hours, for the two of us.")[0]
    trial = disagreement.sentences("Pro comes with a 14-day free trial.")[0]
    assert flight.values["number"] == {"13 span", "2"} and trial.values["number"] == {"14 span"}
    seat = disagreement.sentences("We revised Pro pricing: 15 a seat per month.")[0]
    assert disagreement.differing(trial, seat, "number") == {}
    assert disagreement.sentences("Is the launch on March 3?") == ()


def test_a_weekly_day_is_a_day():
    # "Tuesdays" is when a weekly thing happens: it disagrees with a move to Monday (the long chats' physio slot).
    older = "My physio appointments are Tuesdays at 7:30 in the morning with Jana Okafor."
    newer = "Jana changed my physio slot again, from now on it's Monday lunchtime at 12:30."
    assert disagreement.sentences(older)[0].values["date"] == {"tuesday"}
    found = disagreement.find("When do I have physio with Jana each week?", [("a", older), ("b", newer)])
    assert [(f.older, f.newer, f.disagreement.values["date"]) for f in found] == [
        ("a", "b", (frozenset({"tuesday"}), frozenset({"monday"})))]


def test_a_price_written_as_a_bare_number_is_a_price():
    older = disagreement.sentences("The Pro plan will cost 12 euros per user per month.")[0]
    newer = disagreement.sentences("We revised Pro pricing: 15 a seat per month.")[0]
    assert disagreement.differing(older, newer, "money") == {"money": (frozenset({"12"}), frozenset({"15"}))}
    budget = disagreement.sentences("Our budget for the kitchen is 18,000 euros.")[0]
    limit = disagreement.sentences("22k is our limit for the kitchen, appliances included.")[0]
    assert disagreement.differing(budget, limit, "money") == {"money": (frozenset({"18000"}), frozenset({"22000"}))}
    # A bare number may count anything: with an amount in common, or where nothing speaks of money, no price.
    seats = disagreement.sentences("The Pro plan costs 12 euros a seat for the 3 of us.")[0]
    assert disagreement.differing(older, seats, "money") == {}
    fee = disagreement.sentences("My Spanish course costs 180 euros a month.")[0]
    lesson = disagreement.sentences("My Spanish class is on Wednesdays at 7 in the evening.")[0]
    assert disagreement.differing(fee, lesson, "money") == {}


@pytest.mark.slow
def test_words_are_stemmed_safely_from_many_threads():
    """The web threads share the module: a stemmer shared between them broke mid-word (IndexError, a 500)."""
    words = [f"{'abcdefghij'[i % 10]}{'klmnopqrst'[i // 10 % 10]}running{i}ations" for i in range(20000)]
    chunks = [words[i::8] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        stemmed = list(pool.map(lambda chunk: [disagreement.stem(w) for w in chunk], chunks))
    disagreement.stem.cache_clear()
    assert stemmed == [[disagreement.stem(w) for w in chunk] for chunk in chunks]


def test_the_values_that_differ_are_named_in_one_order_whatever_the_process():
    # A set's order changes from process to process (string hashing): the answer's "values" must not.
    older = disagreement.sentences("The launch is on Tuesday at 14:00 for 12 euros with 40 guests.")[0]
    newer = disagreement.sentences("The launch is on Thursday at 16:00 for 15 euros with 55 guests.")[0]
    found = disagreement.differing(older, newer)
    assert list(found) == sorted(found) == ["date", "money", "number", "time"]
    assert disagreement.describe(found).startswith("date: tuesday against thursday; money: 12 against 15")


def test_a_value_said_inside_a_question_about_ones_own_situation_is_read(remember, recall, acme):
    """Real conversations state facts inside questions (BEAM: most user turns); before claims(), both turns below
    were read as questions that give no value, and the old count came back first with nothing on it."""
    old = remember(acme.member_token, "I've secured 2 interviews for executive producer roles so far, how should I"
                                      " prepare for them?")["memory"]["id"]
    new = remember(acme.member_token, "Quick one: I've secured 4 interviews for executive producer roles now, can you"
                                      " help me plan the week?")["memory"]["id"]
    body = recall(acme.member_token, "How many interviews have I secured for executive producer roles?")
    assert {old, new} <= set(ids(body))
    assert [d["id"] for d in _result(body, old)["disagrees_with"]] == [new]
    assert "disagrees" in _result(body, new)["flags"]


def test_a_question_that_states_nothing_of_ones_own_gives_no_value():
    assert disagreement.claims("Should the budget be $500 or $600?") == ()
    assert disagreement.claims("What if we used 3 servers?") == ()
    stated = disagreement.claims("I'm at 1,200 calls a day now, how do I raise the quota?")
    assert [dict(s.values) for s in stated] == [{"number": frozenset({"1200 call"})}]
    assert disagreement.sentences("I'm at 1,200 calls a day now, how do I raise the quota?") == ()  # passages unchanged


def test_one_that_says_it_never_happened_and_one_that_says_it_did_disagree_on_a_yes_no_question(remember, recall,
                                                                                                  acme):
    """BEAM's contradictions: "I've never used Zotero" against "I just downloaded Zotero": before the yes/no
    reading neither gave a value, and both came back with nothing on them (both flagged: 3 of 38 questions)."""
    did = remember(acme.member_token, "I just downloaded Zotero on March 2 to manage my references, can you help me "
                                      "organize my citations?")["memory"]["id"]
    never = remember(acme.member_token, "I've never used any citation management software like Zotero, so how do "
                                        "I get started with managing my citations")["memory"]["id"]
    body = recall(acme.member_token, "Have I ever used Zotero or any other citation management software?")
    assert [d["id"] for d in _result(body, did)["disagrees_with"]] == [never]
    assert [d["id"] for d in _result(body, never)["disagrees_with"]] == [did]
    (pair,) = body["trace"]["disagreements"]["pairs"]
    assert pair["values"] == "yes/no: yes against never" and pair["update_marker"] is None


def test_a_yes_no_reading_needs_the_question_and_two_of_its_words():
    did, never = ("a", "I just downloaded Zotero to manage my references."), ("b", "I've never used Zotero.")
    assert disagreement.find("Have I ever used Zotero for my references?", [did, never])
    # Not a yes/no question; and one word in common (Zotero) is not the same thing.
    assert disagreement.find("Tell me about Zotero and my references", [did, never]) == []
    assert disagreement.find("Have I ever used Zotero?", [did, ("b", "I've never liked Zotero's icon.")]) == []



def test_a_yes_no_reading_weighs_the_clause_that_answers_not_the_whole_sentence():
    """BEAM's contradictions, read a sentence at a time: a "never" about something else in the same sentence made a
    yes read as a no, and a no in the second sentence lost to a first sentence that shared as many words."""
    question = "Have I ever met Kyle or been to any sneaker expos?"
    met = ("a", "I met Kyle back in 2018 at a sneaker expo in Bridgetown, but I've never tried Nike Air Max before, "
                "so should I give it a shot")
    never_met = ("b", "I've never met anyone like Kyle or been to sneaker expos, can you help me find sneakers?")
    assert [(f.older, f.newer) for f in disagreement.find(question, [met, never_met])] == [("a", "b")]
    question = "Have I tested the contact form submission with any API integration before?"
    tested = ("a", "My contact form submission passed integration testing with the Formspree API in 50 test runs.")
    never_tested = ("b", "I'm having some trouble with my contact form submission. I've never tested it with any API "
                         "integration before, and I'm not sure how to handle the errors.")
    assert [(f.older, f.newer) for f in disagreement.find(question, [tested, never_tested])] == [("a", "b")]
