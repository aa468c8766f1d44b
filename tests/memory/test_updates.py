"""A marked update (memory/updates.py): the newer's words bind a new value to the thing the older gave one for."""
import pytest

from memory.updates import marked


@pytest.mark.parametrize("older, newer, words", [
    ("The launch is on March 3, marketing is lined up.", "Heads up, the launch moved to March 17.",
     "moved to March 17"),
    ("I've budgeted $65 for snacks, so my snack budget is $65.", "I increased my snack budget to $75, can you help?",
     "increased my snack budget to $75"),
    ("I have a deadline of April 1, 2024, for the first sprint.", "The new sprint deadline of April 5 worries me.",
     "new sprint deadline of April 5"),
    ("Coverage of the API module reached 65% today.", "API coverage improved from 65% to 78%.",
     "improved from 65% to 78%"),
    ("I have a Zoom meeting with Danielle on March 22 at 3 PM.",
     "My Zoom meeting with Danielle is rescheduled to March 22 at 4:30 PM.", "rescheduled to March 22 at 4:30 PM"),
    # A question that states the writer's own situation with a value (disagreement.claims).
    ("We agreed on a $500 monthly grocery budget.", "I've increased our grocery budget to $550, how do I plan meals?",
     "increased our grocery budget to $550"),
])
def test_the_words_that_move_a_value_of_the_same_thing(older, newer, words):
    assert marked(older, newer) == words


@pytest.mark.parametrize("older, newer", [
    # A change word elsewhere in the turn says nothing of the value.
    ("The launch is on March 3.", "The launch is on March 17, and now I'm wondering about the ads."),
    # How much it changed, and when, are not the new value.
    ("Screening takes 30% of our time.", "The new tool reduced screening time by 45%."),
    ("The launch is on March 3.", "I updated the launch plan on May 12."),
    # Another thing of the same name: the entertainment budget is not the snack budget.
    ("I stay within my $100 entertainment budget.", "I increased my snack budget to $75."),
    # Another count: sources are not a version; a $120,000 cap is not a $6,200 budget.
    ("My Zotero library has 45 sources.", "I just updated Zotero to 6.0 today."),
    ("The pilot has a budget cap of $120,000.", "I'm looking at the increased budget of $6,200."),
    # A $200 limit per pair is not the $650 a year (BEAM-100K: retired the per-pair one; the $600 a year is the old).
    ("I've got a budget limit of $200 for sneakers.", "I'm buying new sneakers with my increased budget of $650."),
    # "from X to Y" names the old value: it must be the older's.
    ("Coverage of the API module reached 60% today.", "API coverage improved from 65% to 78%."),
    # The older already says the new value.
    ("Accuracy improved from 60% to 85% on the probability problems.",
     "My accuracy on probability problems improved from 60% to 85%."),
])
def test_no_marked_update(older, newer):
    assert marked(older, newer) is None
