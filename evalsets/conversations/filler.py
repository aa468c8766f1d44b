"""Small talk an agent that stores every user turn also stores: no facts to retrieve, only noise around them."""
PERSONAL = """haha ok
thanks, that helps a lot
hmm let me think about that
ok cool
sorry, got distracted, where were we?
that makes sense
not sure yet, I'll come back to it
good morning!
long day today
I'm back
ok, next thing
can you keep that in mind for me?
honestly no idea
wait, really?
lol yes exactly
I'll ask Jonas
never mind, forget what I just asked
perfect, thank you
that's a good point
let's pick this up tomorrow
I'm so tired today
could you write that down somewhere?
yes please
no, that's fine
ha, fair enough
ugh, Mondays
just thinking out loud here
do you remember what I said last week?
anyway
right, right
I'll sleep on it
super, thanks!
hmm, not convinced
that's exactly what I needed
oh nice
let me double check and get back to you
ok one more question
it's raining again here
quick one
can you say that more simply?
that was quicker than I expected
I'm on my phone so typing is slow
brb
back, sorry
I think that's everything for today
you're a lifesaver
that sounds about right
I keep forgetting things lately
yes that's the one
not today, maybe later this week
I need to get better at planning
ok I'm writing this down too
interesting
hmm, good question
love it
sure, why not
that's annoying but fine
the weekend went by way too fast
it's so cold out
finally some sun today
I'll try that
ok that's settled then
can we go through it once more?
all good
lots going on this week
I'm procrastinating, obviously
oh no
ha, I knew it
thanks for being patient with me
good night!
just a small update
I'll let you know how it goes
was that clear?
ok, that's a relief
maybe, we'll see
one sec
done!
""".strip().splitlines()

WORK = """morning!
ok, thanks
let me check with the team
can you keep a note of that?
sounds good
not urgent, just FYI
meeting in five, back later
I'm back from the meeting
that's a good catch
let's park that for now
I'll ping you after lunch
can you summarise the thread for me?
hmm, I need to think about that one
ok, moving on
agreed
that's a question for the next planning
I'll open a ticket
fair point
busy day, sorry for the short answers
let's not overthink it
ok that unblocks me
just a heads-up
good, one less thing
I'm not sure who owns that
we should document this somewhere
remind me later today
done, merged
looks fine to me
I'll add it to the agenda
can you draft a short update for the channel?
standup in ten
that's on my list
nice, thanks
the team is stretched this sprint
let's revisit after the release
yes, go ahead
no, leave it as it is
I'm going to grab a coffee
ok, that was a long call
I'll follow up by email
another fire to put out today
good question, I don't know
can you double check that for me?
let's keep it simple
that's more or less what I expected
quick sanity check
I'll write it up properly later
ha, classic
sprint review went well
retro tomorrow, any ideas?
we need better docs honestly
noted
perfect
that makes the planning easier
let me find the link
one thing at a time
end of day for me
back online
the calendar is a mess this week
ok, I'm convinced
""".strip().splitlines()

PERSONAL += """what a week
I'm going to make tea first
hold on, someone's at the door
ok where was I
I'm in a good mood today for some reason
sorry for the typos
that's funny, I was just thinking the same
let me see what the others think
I should really go to bed
hmm, tricky
yeah no, that won't work
oh wait, I already did that
today was actually productive
I need a nap
let's do it
I'm on the train, signal is bad
my phone is about to die
ok, noted
can you repeat the last part?
not a priority right now
a bit stressed today honestly
that's a relief to hear
I'll think about it on my walk
just checking in
nothing new really
no rush on this
ha, you know me too well
ok, fine, you win
it's been one of those days
I can't believe it's already March
the neighbours are drilling again
I'm eating lunch at my desk again
one thing at a time, right?
that's way too complicated
keep it short please
yes, that's what I meant
no, the other one
exactly what I was worried about
okay, moving on
that can wait until the weekend
I feel like I'm forgetting something
let's call it a day
good to know
I'm curious what you think
whatever is easiest
this is taking forever
ok, small win
wow, already?
nah, skip that
sounds like a plan
hmm maybe later
I'm not in the mood for this today
alright then
thanks, really
ok that's enough planning for tonight
just got home
it's too hot in here
coffee time
oops, wrong chat
ha, no
honestly I don't mind either way
yep
nope
I'll deal with it tomorrow
you're right, as usual
hmm, I wonder
great news actually
""".strip().splitlines()

WORK += """ok, let me read that again
that PR is huge
on a call, back in 20
I'll loop in the others
hmm, that's a bigger change than I thought
not blocking, just curious
let's timebox this
can we do this async?
that's above my pay grade haha
the build is red again
good morning team, well, good morning you
let me dig into the logs
that's a rabbit hole for another day
I'll check the dashboard
one more meeting and I'm done
writing the summary now
I need to prep for the 1:1
quiet day so far
that was a productive session
I'm going heads-down for a bit
late start today, dentist
ok, I'll handle it
who broke main?
let's ship it
not my area, but I'll ask
hmm, the numbers look off
that doesn't sound right
let me think about the trade-offs
I'll draft something and share
can you check my reasoning?
too many notifications today
OOO tomorrow afternoon
back from lunch
ugh, merge conflicts
fine by me
we'll see in the retro
I'll write that down for the handover
that's the third time this week
need to update the roadmap
ok, thanks for the context
interesting idea, let's try it
I'm double-booked again
the demo went fine
clean-up day today
all tests green
let's not change that now
I'll bring it up with the lead
going through my inbox
that's a relief
nothing urgent from my side
""".strip().splitlines()
