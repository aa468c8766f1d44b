"""What the turns are mostly about: pools of sentence templates per topic, filled from small vocabularies.

A turn opens a topic (open), goes on with it (follow), adds details (more) and often asks something (ask). gen.py
strings topics into short episodes, and wraps every labelled statement in the sentences of the episode it falls in,
so a value is said in passing inside a turn about something else. Nothing here states a value of any slot.
"""
import re

SHARED = {
    "name": ["Ben", "Carla", "Dario", "Elif", "Greta", "Hugo", "Ivy", "Kofi", "Leo", "Mira", "Nils", "Olga", "Pia",
             "Rosa", "Sami", "Tess", "Uma", "Vik", "Wen", "Zoe"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "few": ["two", "three", "four", "five", "six"],
    "mins": ["ten", "fifteen", "twenty", "thirty", "forty-five"],
}

TOPICS = {
    "code": dict(domain="work", v={
        "lang": ["Python", "JavaScript", "TypeScript", "Go", "Bash"],
        "task": ["parses dates out of log lines", "merges two CSV exports", "deduplicates customer records",
                 "retries failed HTTP requests", "renames photos by the day they were taken", "validates email addresses",
                 "groups transactions by month", "converts Markdown to HTML", "flattens a nested JSON config",
                 "counts word frequencies in a text file", "resizes a folder of images", "diffs two config files"],
        "error": ["KeyError", "TypeError", "IndexError", "UnicodeDecodeError", "timeout", "null reference error",
                  "recursion depth error", "permission error"],
        "func": ["parse_rows", "merge_accounts", "load_settings", "build_index", "clean_names", "fetch_page",
                 "to_slug", "group_by_month", "normalize_phone", "read_chunks"],
        "loc": ["forty", "sixty", "a hundred and twenty", "two hundred", "eighty"],
        "big": ["five thousand", "eighty thousand", "two million", "three hundred"],
    }, open=[
        "Can you help me with a {lang} function that {task}?",
        "I'm stuck on some {lang} code again.",
        "Quick {lang} question for you.",
        "I'm writing a small script that {task}.",
        "Could you look at a bug with me?",
        "I need a hand refactoring a messy {lang} module.",
        "Got a weird {error} in my {lang} code this morning.",
        "I've been fighting with a function called {func} for an hour.",
        "Can you review a snippet for me before I commit it?",
        "I want to rewrite an old helper that {task}.",
    ], more=[
        "It throws a {error} whenever the input is empty.",
        "The function is called {func} and it's about {loc} lines long.",
        "It works on my laptop but fails in the test run.",
        "Right now it reads everything into memory, which feels wrong.",
        "There's a nested if-else that goes four levels deep.",
        "I already tried wrapping it in a try block, no luck.",
        "The input is a list of dicts with about {big} entries.",
        "{name} wrote the original version and they're out this week.",
        "The tests for it are flaky, maybe one run in five fails.",
        "Performance is fine, it's mostly readability I care about.",
        "I'd like to avoid pulling in another dependency.",
        "The variable names are all single letters, which doesn't help.",
        "Half of it is commented-out code nobody dares to delete.",
        "It's called from about {few} different places.",
    ], ask=[
        "What would you change first?",
        "Is there a cleaner way to write this?",
        "Can you show me a shorter version?",
        "How would you test it?",
        "Should I split it into smaller functions?",
        "Any idea what's going on?",
        "Can you explain why that happens?",
        "Would a dataclass make this nicer?",
    ], follow=[
        "That fixed it, thanks.",
        "Okay, your version is much easier to read.",
        "Hmm, that still fails on the last case.",
        "Nice, the tests pass now.",
        "I don't fully get the part with the generator, can you explain it again?",
        "I tried that and now I get a different {error}.",
        "Good call on the early return.",
        "Back to that {lang} thing from before.",
    ]),
    "git": dict(domain="work", v={
        "branch": ["feature/export", "fix/login-redirect", "chore/deps", "feature/search", "hotfix/encoding"],
        "n": ["three", "twelve", "forty", "seven"],
    }, open=[
        "I messed up my git history again.",
        "Can you help me untangle a merge conflict?",
        "The CI pipeline is red and I don't understand why.",
        "I need to rebase {branch} onto main and I'm scared.",
        "Git question, probably a dumb one.",
        "Our pre-commit hooks are driving me crazy.",
        "How do I undo a commit I already pushed?",
    ], more=[
        "The branch is {branch} and it's {n} commits behind.",
        "The failing step is the linter, not the tests.",
        "I accidentally committed a huge log file.",
        "{name} force-pushed to the shared branch yesterday.",
        "The conflict is in a lock file, of course.",
        "It only fails on the CI runner, never locally.",
        "I want a clean history before the code review.",
        "The pipeline takes {mins} minutes, so every retry hurts.",
    ], ask=[
        "What's the safest way to fix this?",
        "Should I squash or keep the commits?",
        "Can you give me the exact commands?",
        "Is there a way to see what changed between the two runs?",
        "How do I avoid this next time?",
    ], follow=[
        "Okay, the rebase worked, phew.",
        "The pipeline is green again, thank you.",
        "I ran the commands and git says everything is up to date.",
        "Still one conflict left in the lock file.",
        "Good tip about the reflog, I didn't know that.",
    ]),
    "sql": dict(domain="work", v={
        "table": ["orders_archive", "user_events", "invoices", "sessions", "product_views", "signups"],
        "col": ["created_at", "country", "plan", "referrer", "status", "amount"],
    }, open=[
        "Can you help me write a SQL query?",
        "I have a query on {table} that takes forever.",
        "SQL question: how do I get the latest row per user?",
        "I need a report grouped by {col} and I keep getting duplicates.",
        "Window functions still confuse me, honestly.",
        "I'm trying to join {table} to itself and it's a mess.",
    ], more=[
        "The table {table} has a few million rows.",
        "There's no index on {col}, I checked.",
        "I want one row per customer with the total amount.",
        "The dates are stored as strings, which is awful.",
        "Nulls in {col} are breaking my counts.",
        "{name} said a CTE would make it more readable.",
        "It needs to run in the morning report before standup.",
    ], ask=[
        "Can you write it with a window function?",
        "Would an index help here?",
        "How would you structure this query?",
        "Is a left join the right choice here?",
        "Can you explain the plan output to me?",
    ], follow=[
        "The query runs in two seconds now, amazing.",
        "The numbers finally match the spreadsheet.",
        "Hmm, I'm getting one row too many for some customers.",
        "Okay, the CTE version is much clearer.",
        "Can we also filter out the test accounts in that query?",
    ]),
    "email": dict(domain="work", v={
        "who": ["a client", "my manager", "the vendor", "a colleague in sales", "the legal team", "an angry customer"],
        "tone": ["friendly", "firm", "short", "apologetic", "neutral"],
    }, open=[
        "Can you help me write an email to {who}?",
        "I need to reply to {who} and I don't know how to start.",
        "Could you make this message sound less passive-aggressive?",
        "I have to say no to {who} without burning bridges.",
        "Can you draft a short message for the team chat?",
        "Help me word an awkward follow-up to {who}.",
    ], more=[
        "It should be {tone} but not cold.",
        "They've asked the same question three times now.",
        "I want to keep it under five sentences.",
        "{name} will be in copy, so it has to be polite.",
        "I already wrote a draft but it's way too long.",
        "The main point is that we need more time on their request.",
        "I don't want to promise anything specific yet.",
    ], ask=[
        "Can you give me two versions?",
        "Does this sound okay to you?",
        "How would you open it?",
        "Can you cut it down a bit?",
        "Is it too formal?",
    ], follow=[
        "Sent it, thanks for the help.",
        "Your second version is better, I'll use that one.",
        "They replied already and seemed fine with it.",
        "Can you make the last paragraph a bit warmer?",
        "Perfect, that's exactly the tone I wanted.",
    ]),
    "meeting": dict(domain="work", v={
        "kind": ["retro", "one-on-one", "planning session", "sync with design", "quarterly review", "vendor call"],
    }, open=[
        "I have a {kind} later and I'm not prepared.",
        "Can you help me structure an agenda for a {kind}?",
        "That {kind} this morning was exhausting.",
        "I need to run a {kind} for the first time.",
        "Can you summarise my notes from the {kind}?",
        "My calendar is wall-to-wall meetings today.",
    ], more=[
        "It's only {mins} minutes, so we can't cover everything.",
        "{name} tends to dominate these discussions.",
        "Last time we ran out of time before the important part.",
        "Half the people join from home, so it's hybrid.",
        "I want everyone to leave with clear action items.",
        "Nobody reads the pre-read, so I can't rely on it.",
    ], ask=[
        "How should I split the time?",
        "What questions should I ask?",
        "Can you turn this into three bullet points?",
        "How do I keep it from running over?",
        "Any tips for getting quiet people to speak up?",
    ], follow=[
        "The meeting went better than expected.",
        "Your agenda worked, we even finished early.",
        "We ran over again, I give up.",
        "I used your question about blockers and it helped.",
        "Can you write the follow-up notes from what I said?",
    ]),
    "sheet": dict(domain="work", v={
        "fn": ["VLOOKUP", "XLOOKUP", "SUMIFS", "a pivot table", "conditional formatting", "INDEX and MATCH"],
    }, open=[
        "Spreadsheet question for you.",
        "Can you help me with {fn} in Google Sheets?",
        "My spreadsheet formulas broke after someone sorted the data.",
        "I need to clean up a messy sheet someone sent me.",
        "How do I highlight duplicates in a column?",
    ], more=[
        "The sheet has about {few} thousand rows.",
        "Some cells have trailing spaces, which breaks everything.",
        "{name} built it years ago and nobody understands it.",
        "I want a summary tab that updates on its own.",
        "The dates are in three different formats.",
    ], ask=[
        "Which formula should I use?",
        "Can you write the formula for me?",
        "Is {fn} the right tool here?",
        "How do I make it update automatically?",
    ], follow=[
        "The formula works, that saved me an hour.",
        "It shows an error for the empty rows though.",
        "Got the pivot table working, finally.",
        "Can we also color the rows by month?",
    ]),
    "slides": dict(domain="work", v={
        "deck": ["the quarterly update", "a team kickoff", "a lunch-and-learn", "a customer workshop", "the roadmap review"],
    }, open=[
        "I'm putting together slides for {deck}.",
        "Can you help me tighten a presentation?",
        "I have to present {deck} and I hate public speaking.",
        "My slide deck has way too much text.",
        "Can you suggest a structure for a fifteen-minute talk?",
    ], more=[
        "It's about {few} slides right now.",
        "The audience is mostly non-technical.",
        "{name} wants more charts and fewer words.",
        "I always run over time when I present.",
        "The opening slide feels boring to me.",
    ], ask=[
        "What would you cut?",
        "How should I open it?",
        "Can you suggest a better title slide?",
        "How do I end it on a strong note?",
    ], follow=[
        "I cut it down and it flows much better.",
        "The practice run took exactly the right time.",
        "People actually asked questions at the end, which was nice.",
        "Can you help me with the speaker notes too?",
    ]),
    "workday": dict(domain="work", v={}, open=[
        "What a day, I've been in back-to-back calls since eight.",
        "I can't focus at all today.",
        "Finally a quiet afternoon with no meetings.",
        "I'm trying a new to-do system this week.",
        "My inbox is at four hundred unread, send help.",
        "Working from the library today, it's so quiet here.",
        "I need to plan my week before it plans me.",
    ], more=[
        "Everybody wants something by Friday.",
        "I keep switching between tasks and finishing none.",
        "{name} asked me to cover for them this afternoon.",
        "My coffee went cold three times already.",
        "I blocked two hours for deep work and already lost one.",
        "The open office is loud today.",
    ], ask=[
        "How would you prioritise this?",
        "Can you help me sort my to-do list?",
        "Any tricks for staying focused?",
        "What should I drop this week?",
    ], follow=[
        "Okay, I did the most annoying task first like you said.",
        "The timeboxing thing actually works.",
        "I moved two things to next week and feel better.",
        "Back at my desk, let's keep going.",
    ]),
    "docs": dict(domain="work", v={
        "doc": ["the onboarding guide", "a README", "the internal wiki page", "an architecture note", "a how-to for support"],
    }, open=[
        "I'm rewriting {doc} and it's a slog.",
        "Can you help me explain a technical thing in plain words?",
        "I need to write {doc} for new joiners.",
        "Our documentation is out of date again.",
        "Can you proofread a paragraph for me?",
    ], more=[
        "It's full of screenshots from an old version.",
        "Nobody updates it after changes, that's the real problem.",
        "{name} said the current version is impossible to follow.",
        "I want it to be skimmable, with short sections.",
        "The audience is people from the support team.",
    ], ask=[
        "How would you structure it?",
        "Can you make this paragraph simpler?",
        "What sections am I missing?",
        "Should I use a FAQ format?",
    ], follow=[
        "The new structure is much clearer, thanks.",
        "I published it and two people already said it helped.",
        "Can you also add a short summary at the top?",
        "That wording is better than mine.",
    ]),
    "cook": dict(domain="home", v={
        "dish": ["a mushroom risotto", "lentil soup", "a Thai green curry", "shakshuka", "lasagne", "a tomato tart",
                 "dal with rice", "a chickpea stew", "banana bread", "ramen from scratch", "stuffed peppers", "pad thai"],
        "ing": ["coriander", "coconut milk", "feta", "fresh ginger", "smoked paprika", "miso", "spinach", "tahini",
                "buttermilk", "leeks"],
        "n": ["two", "four", "six", "eight"],
    }, open=[
        "I want to make {dish} tonight.",
        "Can you give me a recipe for {dish}?",
        "What can I cook with {ing} and whatever is left in the fridge?",
        "I'm cooking for {n} people on the weekend and need ideas.",
        "My {dish} turned out bland last time.",
        "I bought way too much {ing} and need to use it up.",
        "Dinner idea needed, something quick.",
        "I'm trying to cook more at home this month.",
    ], more=[
        "I don't have {ing}, what can I use instead?",
        "I only have about {mins} minutes.",
        "One of my friends doesn't eat gluten.",
        "I don't own a food processor.",
        "It should be something I can make the day before.",
        "My oven runs hot, so I have to be careful.",
        "I'd like it to be a bit spicy but not too much.",
        "I have half a bag of {ing} that needs using.",
    ], ask=[
        "How long does it take?",
        "Can I freeze the leftovers?",
        "What should I serve with it?",
        "Can you scale it for {n} people?",
        "What's the trick to getting it right?",
    ], follow=[
        "The {dish} was a hit, thanks.",
        "I burned the onions a bit but it still tasted good.",
        "I added extra {ing} and it was great.",
        "Leftovers for lunch tomorrow, perfect.",
        "It took longer than the recipe said.",
    ]),
    "grocery": dict(domain="home", v={
        "item": ["oat milk", "eggs", "rice", "frozen peas", "yoghurt", "coffee beans", "olive oil", "bread flour"],
    }, open=[
        "Can you help me make a shopping list for the week?",
        "I want to plan meals for the next few days.",
        "I keep throwing food away, which annoys me.",
        "I'm going to the market later.",
        "Let's do a cheap meal plan this week.",
    ], more=[
        "We're out of {item} again.",
        "I'd like at least two meals without meat.",
        "Lunches need to be something I can take to work.",
        "Our fridge is tiny, so I can't stock up much.",
        "I'll only have time to cook on two evenings.",
    ], ask=[
        "What should I buy?",
        "Can you group the list by aisle?",
        "What keeps well for a week?",
        "What's a good breakfast that isn't toast?",
    ], follow=[
        "Got everything except the {item}.",
        "The meal plan worked, nothing went to waste.",
        "The market was packed, but I survived.",
        "Can you add snacks to the list?",
    ]),
    "home": dict(domain="home", v={
        "thing": ["the washing machine", "the bathroom tap", "the radiator in the bedroom", "the dishwasher",
                  "the hallway light", "the balcony door", "the shower drain", "the smoke detector"],
    }, open=[
        "Something is wrong with {thing}.",
        "Can you help me figure out a household problem?",
        "I finally want to declutter the hallway.",
        "Cleaning question, probably silly.",
        "I need a better system for chores at home.",
        "{thing} is making a weird noise.",
    ], more=[
        "It started last week and it's getting worse.",
        "I'd rather not call someone if I can fix it myself.",
        "The manual is nowhere to be found.",
        "There's a faint smell I can't place.",
        "It's probably something simple, but I have no idea.",
        "{name} from downstairs had the same issue once.",
    ], ask=[
        "What should I check first?",
        "Is this something I can fix myself?",
        "How do I get limescale off properly?",
        "What tools would I need?",
    ], follow=[
        "It was just a clogged filter, fixed.",
        "Vinegar did the trick, thank you.",
        "Still leaking a bit, I'll call someone.",
        "The chore chart is on the fridge now.",
    ]),
    "books": dict(domain="home", v={
        "genre": ["a thriller", "science fiction", "a memoir", "a cosy mystery", "historical fiction", "a fantasy series"],
        "show": ["a Scandinavian crime series", "a cooking show", "a documentary about octopuses", "a sitcom from the nineties",
                 "a British panel show"],
    }, open=[
        "I need a new book, something like {genre}.",
        "Can you recommend something like {show}?",
        "I just finished {genre} and loved it.",
        "What should I watch this weekend?",
        "I've been in a reading slump for weeks.",
        "I want to read more non-fiction this year.",
    ], more=[
        "Nothing too sad, please.",
        "I prefer books under four hundred pages.",
        "I watched {show} last month and liked it.",
        "{name} keeps recommending the same author to me.",
        "I mostly read on the train in short bursts.",
        "Audiobooks work for me when I'm cleaning.",
    ], ask=[
        "What would you recommend?",
        "Is it worth starting a long series?",
        "Which one should I start with?",
        "Anything lighter?",
    ], follow=[
        "I started the one you suggested and I'm hooked.",
        "Not my thing after all, I stopped after fifty pages.",
        "Finished it in two evenings.",
        "Got another recommendation in the same style?",
    ]),
    "chat": dict(domain="home", v={
        "weather": ["grey and drizzly", "unexpectedly sunny", "freezing", "windy", "muggy", "foggy"],
    }, open=[
        "It's {weather} here today.",
        "Good morning, slow start today.",
        "Long week, I'm glad it's almost over.",
        "I slept terribly last night.",
        "I'm in a surprisingly good mood today.",
        "Just got back from a walk.",
        "Sorry, I got distracted for a bit.",
        "Hi again, it's me.",
    ], more=[
        "The neighbours had a party until two.",
        "I had three coffees and still feel sleepy.",
        "I finally cleaned my desk, it looks like a new room.",
        "{name} called me for an hour, lovely but exhausting.",
        "My phone battery is dying again.",
        "I should really go to bed earlier.",
        "The weekend went by far too fast.",
    ], ask=[
        "Anyway, where were we?",
        "Can you remind me what we talked about earlier?",
        "Do you have a tip for falling asleep faster?",
        "What's a nice thing to do on a rainy evening?",
    ], follow=[
        "Okay, I'm back.",
        "Ha, fair enough.",
        "That made me laugh, thanks.",
        "Right, let's continue.",
    ]),
    "shop": dict(domain="home", v={
        "gift": ["my niece", "a colleague who's leaving", "my neighbour", "my best friend", "my godson"],
        "thing": ["a new rain jacket", "headphones", "a desk lamp", "a backpack", "a coffee grinder", "a winter coat"],
    }, open=[
        "I need a gift idea for {gift}.",
        "I'm looking for {thing} and there are too many options.",
        "Can you help me compare two products?",
        "Online shopping question for you.",
        "I want to buy {thing} that lasts longer than a year.",
    ], more=[
        "I don't want to spend more than fifty or so.",
        "They like plants and anything handmade.",
        "The reviews all contradict each other.",
        "I'd rather buy secondhand if possible.",
        "My last one broke after six months.",
    ], ask=[
        "What would you pick?",
        "What should I look out for?",
        "Is the expensive one worth it?",
        "Any ideas that aren't boring?",
    ], follow=[
        "Ordered it, should arrive on {day}.",
        "They loved the gift.",
        "I went with the cheaper one in the end.",
        "Returned it, it was too small.",
    ]),
    "learn": dict(domain="home", v={
        "thing": ["how compound interest works", "why the sky is blue", "what a mortgage offset is", "how vaccines train the immune system",
                  "the difference between weather and climate", "how noise-cancelling headphones work",
                  "why bread goes stale", "how a heat pump works", "what inflation actually measures"],
    }, open=[
        "Random question: can you explain {thing}?",
        "I was wondering about {thing}.",
        "My nephew asked me {thing} and I had no answer.",
        "Explain {thing} like I'm twelve.",
        "Something I never understood: {thing}.",
    ], more=[
        "I read an article about it but it lost me halfway.",
        "Keep it short, I only have a minute.",
        "I'd like an example from everyday life.",
        "{name} claimed something at dinner and I want to check it.",
    ], ask=[
        "Can you keep it simple?",
        "Is there a good analogy?",
        "Where can I read more?",
    ], follow=[
        "Oh, that actually makes sense now.",
        "So I was wrong at dinner, great.",
        "Interesting, I had no idea.",
        "Can you give me one more example?",
    ]),
    "money": dict(domain="home", v={
        "thing": ["my tax return", "a savings plan", "our streaming subscriptions", "the electricity bill", "a budgeting app"],
    }, open=[
        "I need to sort out {thing}.",
        "Can you help me understand {thing}?",
        "Money admin day, ugh.",
        "I want to spend less on small stuff this month.",
        "I finally looked at {thing} properly.",
    ], more=[
        "We pay for four streaming services and watch one.",
        "The forms make no sense to me.",
        "I keep forgetting to cancel free trials.",
        "{name} uses an app that rounds up every purchase.",
        "I want to put a bit aside each month without thinking about it.",
    ], ask=[
        "Where should I start?",
        "Is there a simple rule of thumb?",
        "What would you cut first?",
    ], follow=[
        "Cancelled two subscriptions already.",
        "The return is filed, what a relief.",
        "Okay, a standing order it is.",
        "Still confused by one line on the form.",
    ]),
    "fitness": dict(domain="home", v={
        "act": ["yoga", "bouldering", "swimming", "spinning", "pilates", "climbing"],
    }, open=[
        "I want to get back into {act}.",
        "My back hurts from sitting all day.",
        "Can you suggest a short stretching routine?",
        "I tried {act} for the first time yesterday.",
        "I need to move more, I sit way too much.",
    ], more=[
        "I only have about {mins} minutes in the morning.",
        "I don't have any equipment at home.",
        "{name} dragged me along and I'm sore now.",
        "I get bored of routines really quickly.",
    ], ask=[
        "How often should I do it?",
        "Can you make me a simple plan?",
        "What's a good beginner exercise?",
    ], follow=[
        "Did the stretches this morning, feels good.",
        "Skipped it today, too tired.",
        "My shoulders already feel better.",
        "Can you add a few core exercises?",
    ]),
    "garden": dict(domain="home", v={
        "plant": ["my basil", "the monstera", "a lemon tree", "the tomatoes on the balcony", "a fiddle leaf fig", "the orchid"],
    }, open=[
        "{plant} is looking sad.",
        "Plant question for you.",
        "I want to grow herbs on the windowsill.",
        "Can you help me save {plant}?",
    ], more=[
        "The leaves are turning yellow at the edges.",
        "It gets sun only in the afternoon.",
        "I might be watering it too much.",
        "{name} gave it to me, so it can't die.",
    ], ask=[
        "How often should I water it?",
        "Does it need a bigger pot?",
        "Should I cut the brown leaves off?",
    ], follow=[
        "{plant} has new leaves, I'm so proud.",
        "Repotted it, fingers crossed.",
        "Moved it to the other window like you said.",
    ]),
    "message": dict(domain="home", v={
        "who": ["my landlord", "an old friend", "my aunt", "the neighbours", "a friend who cancelled on me again"],
    }, open=[
        "Can you help me reply to {who}?",
        "I owe {who} a message and keep putting it off.",
        "How do I politely decline an invitation?",
        "I want to send {who} a nice note.",
    ], more=[
        "I don't want to sound annoyed, even though I am.",
        "It's been months since we last talked.",
        "Keep it short and warm.",
        "{name} thinks I should just call instead.",
    ], ask=[
        "How would you phrase it?",
        "Can you make it sound more natural?",
        "Is this too blunt?",
    ], follow=[
        "Sent it, they replied with a heart.",
        "Your version sounded much more like me.",
        "Okay, I called instead, it was fine.",
    ]),
}


def _extend(topic: str, v: dict | None = None, **parts: list[str]) -> None:
    for var, values in (v or {}).items():
        TOPICS[topic]["v"].setdefault(var, []).extend(values)
    for part, templates in parts.items():
        TOPICS[topic][part].extend(templates)


_extend("code", v={"tool": ["pytest", "mypy", "the debugger", "a profiler", "black", "eslint"]}, open=[
    "Can you explain a piece of {lang} code {name} left behind?",
    "I'm trying to make {func} faster.",
    "Is {tool} worth setting up for a tiny project?",
    "I want to add type hints to an old {lang} file.",
], more=[
    "The function {func} also writes to a log file, which makes testing awkward.",
    "{tool} complains about it, but I don't see why.",
    "I'd like the error messages to say which row broke.",
    "It has a global variable that three functions modify.",
    "The same logic is copy-pasted in {few} files.",
    "I only need it to run once a day, so speed isn't critical.",
    "{name} suggested a regex, but I'd rather keep it readable.",
    "There's a comment saying 'do not touch' with no explanation.",
], ask=[
    "What's the idiomatic way to do this in {lang}?",
    "Would {tool} catch this kind of bug?",
    "How would you name this function?",
], follow=[
    "Okay, {func} is down to half its length.",
    "{tool} is happy now, no more warnings.",
    "I went with your second suggestion in the end.",
    "Makes sense, I'll rename it to something clearer.",
])
_extend("git", open=[
    "My branch {branch} has drifted a long way from main.",
    "I think I committed to the wrong branch, {branch} instead of main.",
    "Code review question about our git workflow.",
], more=[
    "There are {few} open pull requests touching the same file.",
    "The commit messages on {branch} are things like 'fix' and 'wip'.",
    "{name} asked me to split the change into smaller commits.",
    "I have some local changes I don't want to lose.",
    "The lint job on the runner uses a different version than mine.",
], ask=[
    "Should I cherry-pick or merge?",
    "How do I stash just one file?",
    "What's a good rule for commit message style?",
], follow=[
    "Cherry-pick worked, the fix is on main now.",
    "{name} approved the pull request, finally.",
    "I squashed everything into {few} tidy commits.",
])
_extend("sql", open=[
    "Can you check whether my join on {table} is correct?",
    "I need the top {few} values of {col} per week.",
    "How do I pivot rows into columns in SQL?",
], more=[
    "The report only needs the last {few} months.",
    "{col} is sometimes an empty string instead of null.",
    "The count is off compared to what {name} gets.",
    "I'd like the result sorted by {col}, newest first.",
], ask=[
    "Would a subquery be clearer here?",
    "How do I deal with the duplicates in {table}?",
    "Is there a way to do it without a temp table?",
], follow=[
    "Your version with the subquery is much faster.",
    "The duplicates in {table} are gone now.",
    "I saved the query so {name} can reuse it.",
])
_extend("email", open=[
    "I have to chase {who} for an answer, again.",
    "Can you help me thank {who} for their help last week?",
    "I need an out-of-office message that doesn't sound robotic.",
    "Could you proofread a note to {who}?",
], more=[
    "The last message from {who} was quite curt.",
    "I want to ask for a reply by {day} without sounding pushy.",
    "I tend to write very long emails, so please cut ruthlessly.",
    "English isn't their first language, so simple words are better.",
    "{name} said my last email sounded angry, which it wasn't meant to.",
], ask=[
    "How do I end it politely?",
    "What subject line would you use?",
    "Is 'kind regards' too stiff here?",
], follow=[
    "They answered within ten minutes, your subject line worked.",
    "I softened the first sentence like you said.",
    "Sent, now I just wait.",
])
_extend("meeting", open=[
    "I need to give feedback to {name} in our {kind} and I'm nervous.",
    "Can you help me write minutes for the {kind}?",
    "Our {kind} keeps getting cancelled.",
    "I want to suggest fewer meetings to the team.",
], more=[
    "The {kind} is on {day} and I haven't started preparing.",
    "Someone always joins late and we start over.",
    "Decisions from the last {kind} were never written down.",
    "I'd like to try a silent reading start like some teams do.",
    "Cameras on or off is a whole debate in this group.",
], ask=[
    "Should I send the agenda the day before?",
    "How do I politely cut someone off?",
    "What's a good way to close the meeting?",
], follow=[
    "The silent start worked, people were actually prepared.",
    "{name} took the feedback really well.",
    "Minutes are sent, thanks for the template.",
])
_extend("sheet", v={"sheet": ["the expense sheet", "the team rota", "the inventory list", "a survey export", "the sign-up sheet"]}, open=[
    "Can you help me tidy up {sheet}?",
    "I want a chart from {sheet} that doesn't look awful.",
    "How do I lock a few cells in {sheet}?",
    "Is there a formula that splits first and last names?",
], more=[
    "{sheet} is shared with {few} people who all edit it.",
    "Somebody merged cells everywhere, which breaks sorting.",
    "The totals row keeps moving when we add data.",
    "I need it to work in both Excel and Google Sheets.",
    "{name} keeps typing numbers as text.",
], ask=[
    "How do I stop people from breaking the formulas?",
    "Which chart type would you use?",
    "Can I do this without a macro?",
], follow=[
    "Locked the header row, crisis averted.",
    "The chart looks clean now.",
    "{name} loved the new summary tab.",
])
_extend("slides", open=[
    "Can you help me with the story arc of {deck}?",
    "I need one slide that explains a complicated idea simply.",
    "Design question about my slides for {deck}.",
], more=[
    "My manager wants the key message on slide one.",
    "I have a chart that nobody understands.",
    "I'll present it on {day} to about {few} dozen people.",
    "The template colours are hideous, but I have to use them.",
    "I want to end with a clear ask.",
    "{name} will present the second half.",
], ask=[
    "Does this order make sense?",
    "Is one idea per slide too strict?",
    "How do I make the chart readable?",
], follow=[
    "{name} and I rehearsed the handover, it's smooth now.",
    "Moved the key message to the start, much better.",
    "The chart finally makes sense with your labels.",
])
_extend("workday", open=[
    "Today is one of those days where everything takes twice as long.",
    "I have a free hour and no idea what to do with it.",
    "Can you help me plan tomorrow?",
    "I said yes to too many things again.",
], more=[
    "My to-do list has {few} things marked urgent.",
    "I keep getting pulled into chats that aren't mine.",
    "There's a deadline on {day} I completely forgot about.",
    "{name} and I are both waiting on each other, classic.",
    "I'd like to leave on time for once.",
    "The afternoon slump is real today.",
], ask=[
    "How do I say no without sounding lazy?",
    "What's a realistic plan for the afternoon?",
    "Should I block my calendar for focus time?",
], follow=[
    "I left on time yesterday and nothing exploded.",
    "Said no to one request, felt great.",
    "The plan held until lunch, which is a record.",
])
_extend("docs", open=[
    "Can you help me write release notes for a small internal tool?",
    "I need to document a process nobody has written down.",
    "Can you turn my messy notes into a proper page?",
], more=[
    "The process lives only in {name}'s head right now.",
    "The page should fit on one screen if possible.",
    "I'd like a short example for each step.",
    "Half the links in {doc} point to pages that no longer exist.",
    "The tone should be friendly, not like a manual.",
], ask=[
    "Do I need a glossary?",
    "How do I keep it from going stale?",
    "What title would you give it?",
], follow=[
    "{name} read it and found only one mistake.",
    "The glossary idea was good, people use it.",
    "Linked it from the main wiki page.",
])
_extend("cook", v={"side": ["flatbread", "a green salad", "roast potatoes", "rice", "garlic bread", "pickled onions"]}, open=[
    "I have guests on {day} and no idea what to cook.",
    "Can you help me use up leftover {side}?",
    "What's a good one-pot dinner for a weeknight?",
    "I want to bake something for {name}'s birthday.",
], more=[
    "I'd like to serve {side} with it.",
    "It needs to be vegetarian, {name} doesn't eat meat.",
    "I have {ing} and {ing} but not much else.",
    "My pans are pretty bad, so nothing too delicate.",
    "The last time I tried {dish} it stuck to the bottom.",
    "I want to prep as much as possible in the morning.",
], ask=[
    "How do I stop it from getting soggy?",
    "What's a good dessert that goes with it?",
    "Could I swap {ing} for something milder?",
], follow=[
    "{name} asked for the recipe, so I guess it worked.",
    "The {side} was the best part honestly.",
    "Next time I'll use less salt.",
    "I doubled the garlic and don't regret it.",
])
_extend("grocery", v={"meal": ["a pasta bake", "tacos", "a big soup", "fried rice", "a frittata", "veggie burgers"]}, open=[
    "I'm doing a big shop on {day}.",
    "Can we plan meals around {meal} this week?",
    "I want to spend less on groceries this month.",
    "What's a good cheap lunch I can batch cook?",
], more=[
    "{meal} for two nights would be ideal.",
    "I already have {item} and some vegetables.",
    "{name} is staying with me, so it's cooking for two.",
    "Ready meals are getting really expensive.",
    "I'd like to try one new recipe a week.",
    "The bakery near me closes at six, which never works for me.",
], ask=[
    "Can you give me a list under fifty euros?",
    "What can I make from the leftovers of {meal}?",
    "Which vegetables keep the longest?",
], follow=[
    "{meal} lasted three days, perfect.",
    "I stuck to the list for once.",
    "Forgot the {item}, of course.",
])
_extend("home", v={"room": ["the hallway", "the bathroom", "the spare room", "the balcony", "the bedroom", "the cellar"]}, open=[
    "I finally want to sort out {room}.",
    "Can you help me make a cleaning schedule?",
    "{room} has a musty smell I can't get rid of.",
    "I need to hang some shelves and I'm scared of drilling.",
], more=[
    "{room} is where everything ends up that has no place.",
    "I'm not sure if the wall in {room} is concrete or drywall.",
    "I have a drill but I've used it maybe twice.",
    "{thing} has been acting up since the power cut.",
    "I'd like to get rid of half the stuff in {room}.",
    "We only have a tiny vacuum cleaner.",
], ask=[
    "What's the best order to tackle this?",
    "Which plugs should I use for the wall?",
    "How often should I air the place out?",
], follow=[
    "{room} looks twice as big now.",
    "The shelves are up and level, amazing.",
    "Gave three bags of stuff to the charity shop.",
])
_extend("books", v={"author": ["Ursula Le Guin", "Sally Rooney", "Kazuo Ishiguro", "Terry Pratchett", "Agatha Christie", "Haruki Murakami"]}, open=[
    "Have you got something similar to {author}?",
    "I want to try {author}, where should I start?",
    "Our book club needs a pick for next month.",
    "I need a podcast for long walks.",
], more=[
    "{author} is the only writer {name} and I both like.",
    "Something I can finish in a week would be good.",
    "I loved {genre} last year but I'm tired of the genre now.",
    "The book club meets on {day} evenings.",
    "I fall asleep after ten pages if it's too slow.",
    "I'd like something funny for a change.",
], ask=[
    "Is the film better than the book?",
    "Which one would work for a book club discussion?",
    "What's a good short story collection?",
], follow=[
    "The book club loved your suggestion.",
    "{author} was a great tip, I ordered two more.",
    "I'm halfway through and can't put it down.",
])
_extend("chat", v={"thing": ["a new café", "a street festival", "an open-air cinema", "a flea market", "a tiny bookshop"]}, open=[
    "I found {thing} around the corner today.",
    "It was {weather} all weekend, so I stayed in.",
    "I had the strangest dream last night.",
    "My neighbour's cat visited me again this morning.",
    "I'm trying to drink less coffee this week.",
], more=[
    "{thing} had a queue out the door.",
    "I finally watered all the plants, they were begging.",
    "I ended up reorganising my wardrobe for no reason.",
    "{name} texted me a photo of their new haircut.",
    "The bakery had run out of everything by ten.",
    "I went to bed at nine and still feel tired.",
], ask=[
    "Do you think it's silly to have a nap at four?",
    "What's a good thing to cook when it's {weather}?",
    "Any ideas for a lazy Sunday?",
], follow=[
    "Took your advice and went for a walk, it helped.",
    "Okay, I'm properly awake now.",
    "Ha, {name} said the same thing.",
])
_extend("shop", v={"shop": ["the flea market", "a secondhand shop", "an online marketplace", "the hardware store"]}, open=[
    "I saw {thing} at {shop} and I'm tempted.",
    "Help me decide between two colours of {thing}.",
    "I want to buy less stuff this year.",
    "What do I need to know before buying {thing} secondhand?",
], more=[
    "{shop} has a good return policy, at least.",
    "{name} has the same one and loves it.",
    "My current one is held together with tape.",
    "I keep adding things to the basket and never buying.",
    "Delivery would take until {day}, which is fine.",
], ask=[
    "Is it a good deal or am I fooling myself?",
    "What's a fair price secondhand?",
    "Which brand would you trust?",
], follow=[
    "Found one at {shop} for half the price.",
    "I didn't buy it in the end, proud of myself.",
    "It arrived and it's even better than the photos.",
])
_extend("learn", v={"topic": ["black holes", "the Roman Empire", "how bees communicate", "why onions make you cry",
                              "how the stock market works", "the history of the bicycle", "how tides work"]}, open=[
    "I went down a rabbit hole about {topic} last night.",
    "Can you give me a quick primer on {topic}?",
    "I want to learn something new this month, maybe about {topic}.",
    "Settle a debate: {name} says {topic} is more complicated than I think.",
], more=[
    "I watched a documentary about {topic} and have more questions now.",
    "I only have a school-level understanding of it.",
    "I'd like three facts I can repeat at dinner.",
    "{name} is an expert on this, so I want to sound less clueless.",
    "I'd love a good book about {topic} too.",
], ask=[
    "What's the most surprising part?",
    "Is that actually true or a myth?",
    "Can you explain it in three sentences?",
], follow=[
    "I told {name} and they were impressed.",
    "That's wilder than I expected.",
    "Okay, now I get why people find it fascinating.",
])
_extend("money", v={"sum": ["fifty", "a hundred", "two hundred", "thirty"]}, open=[
    "I want to set up a savings goal of {sum} a month.",
    "Can you explain what an index fund is?",
    "I got a letter from the bank I don't understand.",
    "Subscription audit time, help me be ruthless.",
], more=[
    "I spend about {sum} a month on food delivery, which is embarrassing.",
    "My bank app categorises everything as 'other'.",
    "{name} recommended splitting the account into pots.",
    "The letter mentions a fee change from {day} on.",
    "I have no idea what half the direct debits are for.",
], ask=[
    "Is {sum} a month realistic?",
    "What's the simplest way to track spending?",
    "Should I ask the bank about it?",
], follow=[
    "Set up the pots, it already feels easier.",
    "The mystery direct debit was an old gym membership.",
    "Saved {sum} this month without noticing.",
])
_extend("fitness", v={"part": ["knees", "shoulders", "lower back", "wrists", "neck"]}, open=[
    "My {part} feel stiff every morning.",
    "I want a ten-minute routine I can do before work.",
    "I signed up for {act} with {name}.",
    "Sitting at the desk is wrecking my {part}.",
], more=[
    "I used to do {act} at university but stopped.",
    "My {part} click when I do squats.",
    "I can do mornings on {day} and at weekends.",
    "I don't want anything that needs a gym membership.",
    "Stretching bores me, so it has to be short.",
], ask=[
    "Which stretch helps the {part} most?",
    "Is it okay to do it every day?",
    "How long until I notice a difference?",
], follow=[
    "Two weeks in and my {part} feel better.",
    "{act} was fun, I'm going again next week.",
    "I forgot yesterday, doing it now.",
])
_extend("garden", v={"herb": ["mint", "rosemary", "thyme", "chives", "parsley", "coriander"]}, open=[
    "I want to grow {herb} on the balcony.",
    "Something is eating {plant}.",
    "Can you recommend plants that survive neglect?",
    "I'm thinking of a small herb box with {herb}.",
], more=[
    "My {herb} always bolts after two weeks.",
    "The balcony faces north, so it's mostly shade.",
    "I water on {day} and {day}, is that enough?",
    "There are tiny black flies around the soil.",
    "{name} swears by coffee grounds as fertiliser.",
], ask=[
    "What soil should I buy?",
    "Is it too late in the year to plant {herb}?",
    "Can {herb} and {herb} share a pot?",
], follow=[
    "The {herb} is growing like crazy.",
    "The flies are gone since I let the soil dry out.",
    "I gave {name} a cutting and it survived.",
])
_extend("message", v={"event": ["a birthday dinner", "a housewarming", "a reunion", "a wedding anniversary", "a farewell drink"]}, open=[
    "I got invited to {event} and I don't want to go.",
    "Can you help me write a card for {event}?",
    "I want to apologise to {who} for forgetting something.",
    "How do I reconnect with {who} after years?",
], more=[
    "It's on {day} and I'm already tired of it.",
    "I'd like to sound sincere, not like a greeting card.",
    "We had a small falling out last year.",
    "{name} will be there too, which makes it awkward.",
    "A voice message feels too much, text feels too little.",
], ask=[
    "What's a kind way to say I can't make it?",
    "Should I send a small gift as well?",
    "Is it weird to bring up the old thing?",
], follow=[
    "They were really sweet about it.",
    "The card went down well at {event}.",
    "Sent the apology, feeling lighter.",
])

TOPICS.update({
    "music": dict(domain="home", v={
        "inst": ["the guitar", "the piano", "the ukulele", "drums", "the cello"],
        "song": ["a Beatles song", "an old jazz standard", "a Bach prelude", "a Fleetwood Mac song", "a Radiohead song"],
    }, open=[
        "I'm trying to learn {song} on {inst}.",
        "I picked up {inst} again after years.",
        "Can you explain a chord progression to me?",
        "I went to a small concert last night.",
        "I need music for focusing, no lyrics.",
        "My neighbour plays {inst} at midnight.",
    ], more=[
        "My fingers hurt after ten minutes.",
        "I can play the verse but the bridge kills me.",
        "{name} offered to teach me a few basics.",
        "I practise for about {mins} minutes most evenings.",
        "The tutorial goes way too fast for me.",
        "I can't read sheet music, only tabs.",
    ], ask=[
        "How do I practise without annoying the neighbours?",
        "What's a good beginner piece?",
        "How long until it stops sounding terrible?",
        "Any playlists you'd recommend?",
    ], follow=[
        "I played {song} all the way through today.",
        "The metronome trick helped a lot.",
        "My fingers are getting tougher.",
        "{name} said it sounded nice, which I'll take.",
    ]),
    "games": dict(domain="home", v={
        "game": ["Catan", "a cooperative board game", "chess", "a crossword", "Wingspan", "a puzzle game on my phone"],
    }, open=[
        "We're having a games night on {day}.",
        "I've been playing {game} way too much lately.",
        "Can you explain the rules of {game} simply?",
        "I need a game for {few} people that isn't too long.",
        "I lost at {game} again, three weeks in a row.",
    ], more=[
        "{name} always wins and it's getting annoying.",
        "Half the group has never played anything besides cards.",
        "It should take less than an hour.",
        "I stayed up way too late finishing a round.",
        "We have snacks covered, just need the game.",
    ], ask=[
        "Any strategy tips for beginners?",
        "What's a good game for people who hate competition?",
        "Should I learn an opening in chess or is that overkill?",
    ], follow=[
        "Games night was a hit, we played until one.",
        "I finally beat {name}.",
        "The cooperative one was perfect for the group.",
    ]),
    "photo": dict(domain="home", v={
        "subj": ["sunsets", "my friend's dog", "street scenes", "food", "old buildings", "the river at night"],
    }, open=[
        "I want to take better photos of {subj} with my phone.",
        "Can you help me edit a photo that came out too dark?",
        "My phone storage is full of photos again.",
        "I'm thinking of buying a used camera.",
    ], more=[
        "The colours always look flat on my phone.",
        "{name} takes amazing pictures with the same phone.",
        "I have about {few} thousand photos I never look at.",
        "Night shots come out blurry every time.",
        "I'd like to print a few for the wall.",
    ], ask=[
        "What setting should I change first?",
        "How do I back them up without paying a fortune?",
        "Is the rule of thirds actually useful?",
    ], follow=[
        "Those settings made a huge difference.",
        "Deleted a thousand blurry photos, feels great.",
        "Printed three and framed one.",
    ]),
    "design": dict(domain="work", v={
        "screen": ["the settings screen", "the onboarding flow", "the sign-up form", "the empty state", "the error page"],
    }, open=[
        "Can you give me feedback on {screen}?",
        "I'm redesigning {screen} and I'm stuck.",
        "Design question: how many buttons is too many?",
        "The designer and I disagree about {screen}.",
        "Can you help me write microcopy for {screen}?",
    ], more=[
        "Users keep clicking the wrong button on {screen}.",
        "The current version has {few} different font sizes.",
        "{name} wants a big illustration there, I'd rather not.",
        "It has to work on small phones too.",
        "Accessibility contrast is borderline on the grey text.",
    ], ask=[
        "What would you remove?",
        "How should the error message read?",
        "Is a modal the right pattern here?",
    ], follow=[
        "We simplified {screen} and the complaints stopped.",
        "{name} agreed to drop the illustration.",
        "The new copy is so much friendlier.",
    ]),
    "cloud": dict(domain="work", v={
        "svc": ["a Docker image", "the staging server", "a cron job", "the container registry", "a Kubernetes pod"],
    }, open=[
        "{svc} keeps running out of memory.",
        "Can you help me shrink {svc}?",
        "I'm trying to understand why {svc} restarts at night.",
        "Our staging setup is a mess and I want to clean it up.",
        "Quick infrastructure question.",
    ], more=[
        "The logs just stop without an error.",
        "{name} set it up and left no notes.",
        "It's using {few} gigabytes more than it should.",
        "Restarting it fixes things for about a day.",
        "The base image hasn't been updated in ages.",
    ], ask=[
        "Where would you start looking?",
        "Is a multi-stage build worth it here?",
        "How do I get better logs out of it?",
    ], follow=[
        "The image is a third of the size now.",
        "It was a memory leak in a library, of course.",
        "{svc} has been stable for two days.",
    ]),
    "security": dict(domain="work", v={
        "acct": ["my work laptop", "the team password manager", "an old admin account", "the shared inbox"],
    }, open=[
        "IT wants everyone to turn on two-factor for {acct}.",
        "I got a phishing email that looked really convincing.",
        "Can you explain password managers to a sceptical colleague?",
        "We found {acct} that nobody remembers creating.",
    ], more=[
        "The email even had our logo and {name}'s signature.",
        "Half the team still reuses passwords, I'm sure.",
        "I'd like a short explanation I can paste into the chat.",
        "The recovery codes are on a sticky note somewhere.",
    ], ask=[
        "What should I tell the team?",
        "How do I report it properly?",
        "Is an authenticator app better than text messages?",
    ], follow=[
        "Reported the phishing mail, IT thanked me.",
        "Everyone has two-factor now, even {name}.",
        "Deleted the old account, one less risk.",
    ]),
})


SESSION_OPEN = ["Hi, I'm back.", "Morning!", "Hey, it's me again.", "Good evening.", "New week, new problems.",
                "Hi there, got a few things today.", "Hello again.", "Back at it."]

WORDS = re.compile(r"[a-z0-9']+")


def fill(template: str, topic: dict, rng, binding: dict[str, str]) -> str:
    """Fill the slots of a template; a slot keeps its value for the whole episode (binding), except that a slot
    named twice in one template gets two different values ("Can mint and thyme share a pot?")."""
    here: dict[str, list[str]] = {}

    def pick(match):
        var = match.group(1)
        choices = topic["v"].get(var) or SHARED[var]
        if var in here:
            value = rng.choice([c for c in choices if c not in here[var]] or choices)
        else:
            value = binding.get(var) or rng.choice(choices)
            binding.setdefault(var, value)
        here.setdefault(var, []).append(value)
        return value
    text = re.sub(r"\{(\w+)\}", pick, template)
    return text[0].upper() + text[1:]
