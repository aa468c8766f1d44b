from dsl import V, Chain, Stable, Comp, Contra, Conv

C01 = Conv("c01", "maya", None, "2026-02-02", 60, 112, "Maya plans a spring trip to Lisbon with Jonas", chains=[
    Chain("trip-dates", [
        V("Booked flights to Lisbon: out on May 3, back May 10.", restate=["So Lisbon is the 3rd to the 10th of May, flights confirmed."]),
        V("TAP cancelled our outbound, ugh. We're flying May 17 now and coming back on the 24th.", "u"),
        V("OK final version: we land in Lisbon on the 18th of May and fly home on the 25th, the guesthouse only had those nights.", "d", "guesthouse availability"),
    ], now=["When do I fly out for Portugal and when am I back?", "What are the final dates of the spring holiday?"],
       prev=[("Which dates did the Lisbon trip have before TAP cancelled the flight?", 0)], kind="plan"),
    Chain("trip-budget", [
        V("We're capping the whole Portugal trip at 2,500 euros for the two of us."),
        V("Budget's gone up a bit, Jonas got his bonus, so let's say 3,200 € all in.", "u", restate=["roughly 3.2k euros total for Portugal then, flights included"]),
    ], now=["How much money can we spend on the holiday in total?"], prev=[("What was our original spending cap for the trip?", 0)]),
    Chain("lodging", [
        V("Found an Airbnb in Alfama, 95 a night, two bedrooms and a little terrace."),
        V("Cancelled the Alfama flat, the host kept changing the check-in rules. We're at the Casa do Príncipe guesthouse in Príncipe Real instead.", "u"),
    ], now=["Where are we sleeping in Lisbon?"], prev=[("Which place had we booked to stay in before the guesthouse?", 0)]),
    Chain("companions", [
        V("It'll be me and Jonas, plus my sister Ines for the first three days."),
        V("Ines can't come after all, her exam got moved, so it's just Jonas and me.", "u"),
    ], now=["Who is travelling with me to Portugal?"], prev=[("Who was originally going to join us for the first days?", 0)]),
    Chain("dog-care", [
        V("Our neighbour Pavel will look after Biscuit while we're away."),
        V("Pavel is away himself that week, so Biscuit goes to the Happy Paws kennel on Ringstrasse.", "u"),
        V("Scratch the kennel, my mum offered to take Biscuit, she's driving up on the 17th to get him.", "u"),
    ], now=["Who is minding the dog while we're on holiday?", "Where will Biscuit stay during the trip?"],
       prev=[("Before mum offered, what was the plan for the dog?", 1)]),
    Chain("day-trip", [
        V("Thinking of a day trip to Sintra on the Tuesday, the palaces look amazing.", kind="plan"),
        V("Swapped Sintra for Évora, Jonas wants the wine region and Sintra is packed in May.", "u", kind="plan"),
    ], now=["Which town are we visiting on the excursion out of the city?"], kind="plan"),
    Chain("airport-transfer", [
        V("We'll just take the metro from the airport, red line, super easy."),
        V("We land after midnight now and the metro will be shut, so I booked a Bolt transfer with pickup at arrivals.", "d", "late arrival"),
    ], now=["How are we getting from the airport to our accommodation?"]),
    Chain("dinner-booking", [
        V("Got a table at Cervejaria Ramiro on the Friday at 8pm!"),
        V("Ramiro pushed us to 21:30, they were full at eight.", "u"),
    ], now=["What time is our seafood dinner reservation?"], prev=[("What time was the Ramiro table first booked for?", 0)]),
    Chain("pt-sim", [
        V("I'll just use roaming, my plan has 5 GB in the EU."),
        V("Jonas says roaming runs out fast, so I bought an eSIM from Airalo with 10 GB for the trip.", "u"),
    ], now=["How will I get mobile data in Portugal?"]),
], stable=[
    Stable("passport", "My passport is valid until 2031 so nothing to renew for this trip.", ["Do I need to renew any travel documents before we go?"]),
    Stable("seat-pref", "I always want an aisle seat, the window makes me claustrophobic.", ["Which seat should you book for me on flights?"], kind="preference",
           restate=["reminder: aisle for me, never the window"]),
    Stable("insurance", "Travel insurance is through my Visa Gold card, it covers trip cancellation.", ["Which policy covers us if the trip gets cancelled?"]),
], comps=[
    Comp("jonas-seat", "Jonas likes the window, so book us side by side with me on the aisle.", "seat-pref", ["Where does Jonas like to sit on a plane?"], kind="preference"),
    Comp("breakfast", "The guesthouse includes breakfast, served from 8 to 10:30.", "lodging", ["Is the morning meal included where we're staying?"]),
], contras=[
    Contra("evora-bus", "The guidebook says buses to Évora leave from Sete Rios.", "Jonas read on a forum that the Évora buses depart from Oriente.", ["From which station does the bus to Évora leave?"]),
], chat=[
    "ugh I need this holiday so badly", "do you think May is already too hot in Lisbon?", "Jonas keeps sending me pastel de nata videos lol",
    "can you make me a packing list at some point", "I should learn a few Portuguese phrases before we go", "obrigada is thank you, right?",
    "ok booking it now before the price changes", "I'll check with Jonas tonight and get back to you", "the fado show looks touristy but honestly fun",
    "what's the weather usually like there at the end of May?", "I'm terrible at packing light", "remind me what I told you about the hotel?",
    "the trams look adorable", "Ines is so disappointed she can't come", "do we need cash there or is card fine everywhere?",
])

C02 = Conv("c02", "maya", None, "2026-01-12", 84, 108, "Maya's health, food and running", chains=[
    Chain("diet", [
        V("I'm vegetarian, have been for about six years, no meat and no fish.", kind="preference"),
        V("Doctor says my iron is really low so I've started eating fish again, pescatarian for now.", "u", kind="preference",
          restate=["just so you know I eat fish now, still no meat though"]),
    ], now=["What can I eat at the moment, food-wise?", "Am I still off fish?"], prev=[("What was my diet before the iron problem?", 0)], kind="preference"),
    Chain("physio", [
        V("Physio appointments are Tuesdays at 7:30 in the morning with Dr. Kessler."),
        V("Kessler switched my physio to Thursday evenings, 18:15.", "u"),
        V("Physio's now every other Monday at lunch, 12:30, because Kessler cut her evening hours.", "u"),
    ], now=["When is my physiotherapy session?", "What day do I see Kessler?"], prev=[("When was physio before it moved to Mondays?", 1)]),
    Chain("run-plan", [
        V("Training for the Berlin half in April, running 3 times a week, long run on Sundays.", kind="plan"),
        V("Knee flared up, dropping to two easy runs a week and swimming instead of the long run.", "u", kind="plan"),
    ], now=["How many times a week am I running right now?"], prev=[("What was my running schedule before the knee issue?", 0)], kind="plan"),
    Chain("race", [
        V("Signed up for the Berlin half marathon on April 5.", kind="plan"),
        V("Deferred Berlin to next year; doing the 10k in Potsdam on May 10 instead.", "u", kind="plan"),
    ], now=["Which race am I doing this spring?"], prev=[("Which race had I entered originally?", 0)], kind="plan"),
    Chain("coffee", [
        V("Trying to keep it to two coffees a day, none after 2pm.", kind="preference"),
        V("Down to one coffee in the morning now, sleep is way better.", "u", kind="preference"),
    ], now=["How much caffeine am I allowing myself each day?"], kind="preference"),
    Chain("gp", [
        V("My GP is Dr. Aydin at the Praxis am Markt."),
        V("Registered with a new doctor closer to home, Dr. Fischer on Lindenallee.", "u"),
    ], now=["Who is my family doctor these days?"], prev=[("Who was my GP before I switched?", 0)]),
    Chain("supplement", [
        V("Taking 14 mg iron every morning with orange juice."),
        V("Ferritin is back up, so the doctor halved the iron: 14 mg every second day.", "d", "blood test improved"),
    ], now=["How often do I take the iron tablets now?"]),
    Chain("sleep-target", [
        V("Goal is lights out by 23:00 on weeknights.", kind="plan"),
        V("Moving bedtime to 22:30 since I'm up at 6 for swimming.", "u", kind="plan"),
    ], now=["What time should I be in bed on weeknights?"], kind="plan"),
    Chain("swim-pool", [
        V("Swimming at the Stadtbad Mitte, lane swim at 6:30."),
        V("Stadtbad Mitte closed for repairs, going to the Europasportpark pool instead, same time.", "u"),
    ], now=["Which pool do I swim at?"]),
], stable=[
    Stable("allergy", "I'm allergic to penicillin, it's in my records but always mention it.", ["Which antibiotic must I never be given?"],
           restate=["remember the penicillin allergy if anything medical comes up"]),
    Stable("blood-type", "My blood type is A negative.", ["What's my blood group?"]),
    Stable("lactose", "Dairy is fine for me but I prefer oat milk in coffee.", ["What milk do I like in my coffee?"], kind="preference"),
], comps=[
    Comp("vitamin-d", "Also taking vitamin D, 1000 IU a day through winter.", "supplement", ["Which other supplement do I take besides iron?"]),
    Comp("knee-exercises", "Kessler gave me knee exercises: 3 sets of wall sits and step-downs, every evening.", "physio", ["What rehab exercises should I do at home?"]),
], contras=[
    Contra("shoe-size", "My running shoe size is EU 39.", "Ordered size 40 running shoes, that's my size in Brooks.", ["What size running shoes do I wear?"]),
], chat=[
    "my knee is being so annoying this week", "I feel so much better since the fish thing honestly", "can you find me a salmon recipe that isn't boring",
    "swam 1.5 km today!", "is it normal to be this tired on iron tablets?", "note to self: buy new goggles", "slept like a baby last night",
    "what was the name of my doctor again?", "ran in the rain today, kind of loved it", "ugh the pool was so crowded", "I hate wall sits",
    "should I get a foam roller?", "Jonas made me a lentil curry, very proud of him", "cut out the afternoon coffee, it's hard",
])

C03 = Conv("c03", "maya", None, "2026-03-02", 70, 96, "Maya moves flats", chains=[
    Chain("move-date", [
        V("Moving into the new flat on Kastanienallee on April 1.", kind="plan"),
        V("Landlord says renovations run late, so handover is April 15 now.", "u", kind="plan"),
        V("Handover finally set: keys on April 11, movers on the 12th.", "d", "landlord confirmed", kind="plan"),
    ], now=["When do we get the keys and move?"], prev=[("What was the moving date before the renovations ran late?", 0)], kind="plan"),
    Chain("rent", [
        V("Rent for the new place is 1,450 warm per month."),
        V("They recalculated the heating advance, rent comes to 1,520 warm now.", "u"),
    ], now=["How much is the monthly rent on the new flat?"], prev=[("What did the landlord first quote as monthly rent?", 0)]),
    Chain("movers", [
        V("Booked Umzug Blitz for the move, 690 euros for two guys and a van."),
        V("Umzug Blitz can't do the new date, so we go with Kiezmover, 740 euros, three people.", "u"),
    ], now=["Which moving company is doing our move?"], prev=[("Which movers did we book first?", 0)]),
    Chain("internet", [
        V("Internet at the new flat will be Telekom fibre, 250 Mbit, installation on April 3.", restate=["Telekom fibre, 250 down, tech comes on the 3rd of April"]),
        V("Telekom can't install until June, so we signed with 1&1 cable, 500 Mbit, hooked up on the 14th.", "u"),
    ], now=["Who is our broadband provider at the new address?"], prev=[("Which internet contract did we have lined up before Telekom fell through?", 0)]),
    Chain("storage", [
        V("Renting a storage box at Shurgard Neukölln for the bikes, 59 a month."),
        V("Cancelled Shurgard, the new building has a bike cellar.", "u"),
    ], now=["Where do the bikes go after the move?"]),
    Chain("old-flat-handover", [
        V("Handover of the old flat on Wrangelstraße is March 31 at 10am.", kind="plan"),
        V("Old landlady wants the keys back on April 16 at 9 instead.", "u", kind="plan"),
    ], now=["When do I return the keys of the old flat?"], kind="plan"),
    Chain("deposit", [
        V("Deposit for the new flat is three months cold rent, 3,600, paid into the Kaution account.", restate=["the Kaution is 3,600, paid into the rent deposit account"]),
        V("Switched the deposit to a Kautionsbürgschaft, the guarantee costs 120 a year so the cash stays with us.", "u"),
    ], now=["How is the rental deposit for the new flat handled?"]),
    Chain("painting", [
        V("We'll paint the bedroom ourselves the weekend after the move, sage green.", kind="plan"),
        V("Changed our minds on the colour: warm white for the bedroom, and we're hiring a painter.", "u", kind="plan"),
    ], now=["What colour is the bedroom going to be and who's painting it?"], kind="plan"),
], stable=[
    Stable("landlord", "New landlord is Herr Brandt, reachable at brandt.hausverwaltung@gmx.de.", ["How do I contact the owner of the new flat?"]),
    Stable("floor", "The new flat is on the 4th floor with a lift, 78 square metres.", ["How big is the new apartment?"]),
    Stable("parking", "No parking spot comes with the flat, we need a resident permit.", ["Do we get a car space at the new address?"]),
], comps=[
    Comp("electricity", "Electricity contract for the new place is with Vattenfall, starting on handover day.", "internet", ["Who supplies the power at the new flat?"]),
    Comp("utility-cost", "On top of rent we pay about 35 a month for the building's cleaning service.", "rent", ["What other monthly building costs do we have besides rent?"]),
], contras=[
    Contra("bin-day", "Herr Brandt said the bins are collected on Wednesdays.", "The neighbour told me the rubbish goes out on Fridays.", ["What day is rubbish collection in the new building?"]),
], chat=[
    "boxes everywhere, send help", "I never want to move again", "we found Jonas's old guitar in the closet lol",
    "do you know a good way to pack plates?", "the new kitchen is so much bigger", "ugh, more paperwork for the Anmeldung",
    "did I tell you who the movers are?", "Biscuit hates the boxes", "I'm giving away the old sofa on Kleinanzeigen",
    "just measured the bedroom, the wardrobe fits!", "we should throw a housewarming",
])

C04 = Conv("c04", "tom", None, "2026-01-05", 90, 124, "Tom plans his wedding with Priya", chains=[
    Chain("wedding-date", [
        V("Wedding date is set: September 12, 2026.", kind="plan"),
        V("The venue double-booked us, so the wedding is on September 19 now.", "u", kind="plan", restate=["date changed to the 19th of September, venue mix-up"]),
    ], now=["What day is the wedding?", "When are Priya and I getting married?"], prev=[("What was the wedding date before the venue mix-up?", 0)], kind="plan"),
    Chain("venue", [
        V("We picked Gut Sonnenhof near Potsdam as the venue, barn ceremony plus garden dinner."),
        V("Gut Sonnenhof messed up the booking, we moved to the Seehaus am Wannsee.", "u"),
    ], now=["Where is the wedding taking place?"], prev=[("Which venue did we choose first?", 0)]),
    Chain("guests", [
        V("Guest list is at 80 people."),
        V("Priya's side added cousins, we're at 104 guests.", "u"),
        V("Cut it down to 95 after the venue change, the Seehaus seats 100 max.", "u"),
    ], now=["How many guests are we inviting?"], prev=[("How many guests did we have before cutting for the new venue?", 1)]),
    Chain("wedding-budget", [
        V("Wedding budget is 25,000 euros total."),
        V("Parents are chipping in, budget goes up to 32,000.", "u"),
    ], now=["How much can we spend on the wedding overall?"], prev=[("What was the wedding budget before the parents helped?", 0)]),
    Chain("caterer", [
        V("Catering by Feinkost Albrecht, buffet style, 68 per head."),
        V("Seehaus requires their in-house kitchen, so catering is the Seehaus menu at 74 per head, plated.", "u"),
    ], now=["Who is catering the wedding and at what price per person?"], prev=[("What catering had we booked originally?", 0)]),
    Chain("best-man", [
        V("My brother Sam will be best man."),
        V("Sam is deployed abroad in September, so Felix is my best man now.", "u"),
    ], now=["Who is my best man?"], prev=[("Who was going to be best man before Felix?", 0)]),
    Chain("photographer", [
        V("Photographer is Lena Brück, 2,400 for the full day."),
        V("Lena Brück isn't free on the 19th, we booked Marco Lenz instead, 2,650.", "u"),
    ], now=["Which photographer is shooting the wedding?"]),
    Chain("honeymoon", [
        V("Honeymoon plan: two weeks in Japan in October.", kind="plan"),
        V("Japan is too expensive with the bigger wedding, honeymoon is ten days in Sicily instead.", "u", kind="plan"),
    ], now=["Where are we going for the honeymoon?"], prev=[("Where did we first want to go on honeymoon?", 0)], kind="plan"),
    Chain("band", [
        V("Music: a DJ from Berlin Beats, 1,200 for the night."),
        V("We're having a live band after all, the Swing Kids, 2,100, they'll do the first dance too.", "d", "Priya wanted live music"),
    ], now=["Who is playing music at the reception?"]),
    Chain("rsvp", [
        V("RSVP deadline for guests is June 1.", kind="plan"),
        V("Pushed the RSVP deadline to June 30 because the invites went out late.", "u", kind="plan"),
    ], now=["By when do guests have to reply?"], kind="plan"),
], stable=[
    Stable("rings", "The rings are from Goldschmiede Weiss, picking them up in August.", ["Where did we order the rings?"]),
    Stable("priya-diet", "Priya is vegan, so the menu needs a proper vegan main, not just sides.", ["What dietary needs does Priya have for the menu?"], kind="preference",
           restate=["don't forget: Priya doesn't eat animal products, the menu needs a real vegan main"]),
    Stable("officiant", "Civil ceremony at the Standesamt Steglitz the day before, Friday at 11.", ["When is the registry office appointment?"]),
], comps=[
    Comp("kids-menu", "Kids under 12 get a children's menu at 30 per head.", "caterer", ["What does catering cost for the children?"]),
    Comp("groomsmen", "Groomsmen are Felix, Jan and Ole.", "best-man", ["Who are the groomsmen?"]),
], contras=[
    Contra("dress-code", "Dress code is black tie.", "Priya told her family the dress code is summer smart casual.", ["What should guests wear to the wedding?"]),
], chat=[
    "so much planning, I had no idea", "Priya and I had a small fight about the seating chart lol", "what was the venue called again?",
    "honestly the cake tasting was the best part so far", "mum keeps adding people to the list", "do you think 95 is still too many?",
    "going to look at suits this weekend", "remind me to call the florist", "our save-the-dates look great",
    "I'm kind of nervous about the speech", "Felix is going to roast me, I know it", "we still need a hashtag haha",
])
