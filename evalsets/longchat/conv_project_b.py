"""Project conversations of the held-out half (even numbers): harbor (a coastal nonprofit), quill (a writing-tools
startup), orchard (a data platform team)."""
from dsl import Contra, Conv, Slot

L04 = Conv("l04", "maya", "harbor", "2026-01-20", 114, "Maya organises the harbor fundraising gala", slots=[
    Slot("gala-date", [
        "The Harbor gala is on April 18.",
        "M|Heads up: the gala moved to May 9, the venue had a water leak.",
    ], ask=["When does the fundraising dinner take place?"],
        prev=[("What was the gala's original date?", 0)],
        noise=["Can you help me write the gala invitation? It should sound warm, not corporate."],
        w="gala invitation leak"),
    Slot("ticket", [
        "Gala tickets are 95 euros each.",
        "U|A seat at the gala costs 120 euros, dinner included.",
    ], ask=["How much does one person pay to attend the fundraiser?"],
        noise=["We need someone to design the tickets, any ideas for tools?"],
        comps=[("A table of ten goes for 1,000 euros, mostly bought by corporate sponsors.",
                ["What does a full table cost?"])],
        w="tickets ticket seat table euros"),
    Slot("sponsor", [
        "Our main sponsor for the gala is Nordsee Bank.",
        "M|Nordsee Bank pulled out and was replaced by Kuehne Logistics as the main sponsor.",
    ], ask=["Who is the headline backer of the event?"],
        restate={1: ["Kuehne Logistics is our main sponsor, their logo goes on the banner."]},
        noise=["Sponsors want their logos on everything, even the napkins."],
        w="sponsor sponsors nordsee kuehne logos"),
    Slot("goal", [
        "We want to raise 60,000 euros at the gala.",
        "M|The board revised the fundraising goal up to 75,000.",
        "U|We're aiming to bring in 70,000 on the night.",
    ], ask=["How much money are we hoping to collect at the event?"],
        prev=[("What was the board's target before the latest number?", 1)],
        noise=["The board wants a live donation counter on a screen, which sounds stressful."],
        w="raise fundraising goal board donation"),
    Slot("registry", ["Our charity registration number is VR 20417."],
         ask=["What's the nonprofit's official registry number?"],
         noise=["The tax office wants our registration documents again, for the third time."],
         w="registration charity tax"),
    Slot("bank", ["Donations go to our account at GLS Bank."],
         ask=["At which bank do the contributions arrive?"],
         noise=["PayPal donations take forever to show up in our account."],
         w="bank gls paypal account donations"),
], contras=[
    Contra("capacity", "The venue's brochure says the hall seats 180 for dinner.",
           "The events manager told me the hall fits 220 with round tables.",
           ask=["How many dinner guests can the hall hold?"],
           w="hall brochure capacity venue"),
])

L08 = Conv("l08", "tom", "quill", "2026-01-13", 106, "Tom launches the quill podcast", slots=[
    Slot("ep1", [
        "The first episode of the Quill podcast goes live on March 5.",
        "M|Episode one is postponed to March 19, the audio needs re-editing.",
    ], ask=["When does the show's debut come out?"],
        prev=[("When was the first episode originally meant to be published?", 0)],
        noise=["Can you help me write the description for episode one? Two short paragraphs."],
        w="podcast episode audio"),
    Slot("guest", [
        "Our first guest is the novelist Mara Lindqvist.",
        "U|Episode one features Jon Abara, the screenwriter.",
    ], ask=["Who will be interviewed on the first show?"],
        noise=["I'm terrible at writing interview questions, they all sound like a job interview."],
        w="guest mara jon interview"),
    Slot("mic", [
        "We're recording with Rode PodMic microphones.",
        "M|We switched to Shure SM7B mics, the Rodes picked up too much room noise.",
    ], ask=["What microphones are we using?"],
        noise=["The recording room echoes like a cathedral, we need blankets on the walls."],
        w="mic mics microphones rode shure recording echoes"),
    Slot("host", [
        "The podcast will be hosted on Buzzsprout.",
        "U|We're putting the show on Transistor, their team plan fits us better.",
    ], ask=["Which platform publishes our episodes?"],
        noise=["Podcast hosting dashboards all look the same to me."],
        w="buzzsprout transistor hosted hosting platform"),
    Slot("length", ["Episodes will be about 35 minutes long."],
         ask=["How long is each show supposed to run?"],
         noise=["Someone asked whether the episodes will have transcripts, good question."],
         comps=[("Each episode gets a transcript on the blog two days after release.",
                 ["When do the written transcripts go up?"])],
         w="transcript transcripts minutes"),
    Slot("room", ["We record the podcast in the small meeting room on the fourth floor."],
         ask=["Where do we tape the show?"],
         noise=["Someone keeps leaving coffee cups in our recording room."],
         w="floor room"),
], contras=[
    Contra("trailer", "Jamal said the trailer got 1,200 downloads in its first week.",
           "The hosting dashboard shows only 800 downloads for the trailer's first week.",
           ask=["How many times was the teaser downloaded in week one?"],
           w="trailer downloads jamal"),
])

L12 = Conv("l12", "lena", "harbor", "2026-02-17", 104, "Lena leads the harbor website redesign", slots=[
    Slot("golive", [
        "The new Harbor website goes live on April 1.",
        "U|We launch the redesigned site in the week of April 20, most likely on the 22nd.",
    ], ask=["When is the new site going public?"],
        prev=[("What was the original go-live date for the redesign?", 0)],
        noise=["The website redesign mood board is full of ocean blues, surprise surprise."],
        w="website site redesign launch"),
    Slot("agency", [
        "The redesign is being done by the agency Pixelwerk.",
        "M|Pixelwerk is out; a freelancer named Tomasz is finishing the site.",
    ], ask=["Who is building the new website for us?"],
        noise=["Agencies always send invoices faster than designs."],
        w="pixelwerk agency agencies tomasz freelancer"),
    Slot("cms", [
        "We're building the new site on WordPress.",
        "M|We've decided to go with Webflow instead of WordPress.",
    ], ask=["Which content system does the new site run on?"],
        noise=["Half the old pages are broken links, it's embarrassing."],
        w="wordpress webflow cms plugin"),
    Slot("pages", [
        "The new site will have 24 pages at launch.",
        "U|We go live with 18 pages, the rest can come later.",
    ], ask=["How many pages will be up on day one?"],
        comps=[("Six of the pages get a Danish translation at launch.",
                ["How many pages will have a Danish version?"])],
        w="pages danish"),
    Slot("color", ["Our brand colour is teal, hex 0E7C86."],
         ask=["What exact shade do we use for the logo and buttons?"],
         noise=["The brand guidelines PDF is from 2019 and nobody follows it."],
         w="brand teal colour hex"),
    Slot("a11y", ["The site has to meet WCAG AA for accessibility."],
         ask=["Which standard for users with disabilities must the new pages comply with?"],
         noise=["Someone complained that the old site is impossible to use with a screen reader."],
         w="wcag accessibility screen"),
], contras=[
    Contra("traffic", "Google Analytics shows about 9,000 visitors a month on the old site.",
           "The hosting logs say the old site gets more like 14,000 visitors a month.",
           ask=["How much monthly traffic does the current site get?"],
           w="visitors analytics traffic"),
])

L16 = Conv("l16", "raj", "quill", "2026-03-03", 116, "Raj gives a conference talk and grows the quill team", slots=[
    Slot("talk-slot", [
        "My talk at WriteConf is on May 21 at 14:00.",
        "M|WriteConf moved my talk to the morning of May 22, 9:30.",
    ], ask=["When am I presenting at the conference?"],
        noise=["I keep practising the talk in front of my cat."],
        w="writeconf talk conference"),
    Slot("title", [
        "The talk is called 'Drafts at Scale'.",
        "U|My session's title is 'What Writers Really Undo'.",
    ], ask=["What's the name of my conference presentation?"],
        noise=["Titles for talks are harder than the talks themselves."],
        w="title titles session"),
    Slot("hires", [
        "We're hiring one backend engineer this quarter.",
        "M|We got approval for two backend hires this quarter instead of one.",
        "U|The plan is three backend engineers by the end of the quarter.",
    ], ask=["How many backend people are we recruiting this quarter?"],
        prev=[("How many backend roles had been approved before the latest number?", 1)],
        noise=["Writing job descriptions is harder than writing code, honestly."],
        comps=[("We're also hiring one part-time designer, starting in June.",
                ["Are we hiring anyone for design?"])],
        w="hire hires hiring backend engineer engineers recruit"),
    Slot("panel", [
        "Nadia leads the interview panel for backend roles.",
        "M|The new lead for the backend interview panel is Bruno.",
    ], ask=["Who runs the hiring panel for those engineering jobs?"],
        noise=["The interview panel keeps rescheduling, candidates must hate us."],
        w="panel nadia bruno interview"),
    Slot("takehome", ["Every candidate does a take-home task capped at three hours."],
         ask=["How long should the homework assignment take applicants at most?"],
         noise=["The take-home task repo has a typo in the readme, I should fix it."],
         w="take candidate readme"),
    Slot("travel", ["WriteConf pays for my travel, up to 600 euros."],
         ask=["Who is covering the cost of my trip to the event?"],
         noise=["Conference hotels are always so overpriced."],
         w="travel hotels euros"),
], contras=[
    Contra("room-size", "The organisers said my room holds 300 people.",
           "A speaker from last year told me that room is tiny, maybe 120 seats.",
           ask=["How many people fit in the room for my session?"],
           w="organisers speaker seats room"),
])

L18 = Conv("l18", "maya", "harbor", "2026-03-10", 102, "Maya runs the harbor spring beach cleanup", slots=[
    Slot("date", [
        "The spring beach cleanup is on April 25.",
        "U|Our beach cleanup happens on May 2, starting at nine.",
        "M|Update: the cleanup is now on Sunday, May 3, because of the sailing regatta.",
    ], ask=["When is the volunteer day at the beach?"],
        prev=[("Which date was the cleanup set for right before the regatta clash?", 1)],
        noise=["Can you help me write a short post inviting people to the beach cleanup?"],
        w="cleanup beach regatta sailing"),
    Slot("coordinator", [
        "Ingrid coordinates the volunteers this year.",
        "M|Ingrid handed volunteer coordination over to Malik.",
    ], ask=["Who organises the helpers?"],
        noise=["We always get more volunteers than we expect and then run out of coffee."],
        w="coordinates coordination ingrid malik volunteer volunteers"),
    Slot("meet", [
        "Volunteers meet at the Strandkorb kiosk at the north end.",
        "U|The gathering point is the lifeguard tower by the pier.",
    ], ask=["Where should people show up on the morning of the event?"],
        noise=["The map we printed last year is totally outdated."],
        w="kiosk lifeguard pier map strandkorb"),
    Slot("gloves", [
        "We ordered 300 pairs of gloves for the cleanup.",
        "M|Actually it's 500 pairs of gloves, the supplier gave us a bulk discount.",
    ], ask=["How many pairs of hand protection do we have?"],
        noise=["The glove supplier's invoice had our name spelled wrong."],
        comps=[("We also have 200 collection buckets left over from last year.",
                ["How many containers do we have for gathering litter?"])],
        w="glove gloves supplier buckets"),
    Slot("form", ["Volunteers under 16 need a form signed by a parent."],
         ask=["What do teenage helpers need to bring?"],
         noise=["Lots of school classes want to join this year, which is lovely."],
         w="form parent teen classes"),
    Slot("trailers", ["The city lends us two trash trailers for the day."],
         ask=["What does the city provide for hauling the waste away?"],
         noise=["The city's waste department never answers emails before noon."],
         w="trailers trash waste city"),
], contras=[
    Contra("last-year", "Ingrid's report says we collected 1.2 tonnes of trash last year.",
           "The city's press release said last year's cleanup removed 800 kilos.",
           ask=["How much garbage was picked up at the previous spring's event?"],
           w="tonnes kilos report"),
])

L22 = Conv("l22", "lena", "orchard", "2026-03-24", 100, "Lena prepares orchard for a privacy audit", slots=[
    Slot("audit-date", [
        "The external privacy audit is on May 12.",
        "U|The auditors are coming on the 26th of May.",
    ], ask=["When do the inspectors visit for the privacy review?"],
        prev=[("When was the privacy audit originally planned?", 0)],
        noise=["I'm dreading the audit week, everyone gets so tense."],
        w="audit auditors privacy"),
    Slot("firm", [
        "The audit is being done by Kessler Compliance.",
        "M|Kessler was replaced by DataTrust as our auditor.",
    ], ask=["Which firm is doing the privacy review?"],
        noise=["Kessler's engagement letter was pure legalese."],
        w="kessler datatrust firm legalese"),
    Slot("pii-tables", [
        "We found 37 tables with personal data so far.",
        "M|Revised count after scanning the marketing schemas: 52 tables hold personal data.",
        "U|The PII inventory lists 49 tables.",
    ], ask=["How many tables in our systems hold information about individuals?"],
        noise=["The PII scanner flags every column called 'name', even product names."],
        w="pii scanner inventory personal tables"),
    Slot("dpo", [
        "Our data protection officer is Henrik.",
        "M|Henrik is no longer our data protection officer; questions about the audit go to Beatriz now.",
    ], ask=["Who is the company's privacy officer?"],
        noise=["The data protection training is mandatory again this year."],
        w="officer henrik beatriz protection"),
    Slot("deletion", ["Customer data must be deleted within 30 days of an account being closed."],
         ask=["What's our deadline for wiping information after someone cancels?"],
         noise=["Account deletion requests spiked after the newsletter mishap."],
         comps=[("Deletion requests have to be acknowledged within 72 hours.",
                 ["How fast must we confirm a request to remove someone's data?"])],
         w="deleted deletion erase account"),
    Slot("evidence", ["Audit evidence goes into the shared drive folder called Audit 2026."],
         ask=["Where do we store the proof for the auditors?"],
         noise=["Collecting evidence is like doing taxes, but worse."],
         w="evidence folder drive"),
])

CONVS = [L04, L08, L12, L16, L18, L22]
