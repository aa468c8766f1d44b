from dsl import V, Chain, Stable, Comp, Contra, Conv

C05 = Conv("c05", "tom", None, "2026-02-09", 75, 98, "Tom's routines: Spanish, gym, car, job", chains=[
    Chain("spanish-class", [
        V("Spanish class at the Volkshochschule, Mondays and Wednesdays 19:00.", kind="plan"),
        V("Switched to the intensive course, Saturday mornings 9 to 12 only.", "u", kind="plan", restate=["Spanish is Saturday 9-12 now, the intensive one"]),
    ], now=["When is my Spanish course?"], prev=[("When did Spanish lessons happen before the intensive course?", 0)], kind="plan"),
    Chain("gym-days", [
        V("Gym days are Monday, Wednesday and Friday before work.", kind="plan"),
        V("Because of Spanish moving, gym is Tuesday, Thursday and Saturday afternoons now.", "u", kind="plan"),
    ], now=["Which days do I train at the gym?"], kind="plan"),
    Chain("car-lease", [
        V("Leasing a VW ID.3, 329 a month, ends in March 2027."),
        V("Swapped the lease to a Skoda Enyaq, 389 a month, because the ID.3 boot is too small for the wedding stuff.", "u"),
    ], now=["What car am I leasing and what does it cost?"], prev=[("Which car did I lease before the Skoda?", 0)]),
    Chain("salary", [
        V("Current salary is 72k gross."),
        V("Negotiated a raise: 79.5k from April.", "u"),
    ], now=["What is my gross pay now?"], prev=[("What was my salary before the raise?", 0)]),
    Chain("commute", [
        V("I commute by S-Bahn, S1 to Friedrichstraße, about 40 minutes."),
        V("Cycling to work most days now, 35 minutes along the canal.", "u"),
    ], now=["How do I usually get to the office?"]),
    Chain("niece-pickup", [
        V("I pick up my niece Mila from school on Thursdays at 15:30."),
        V("Mila's school finishes later now, pickup is Thursdays at 16:15.", "u"),
        V("My sister swapped days with me: I collect Mila on Tuesdays at 16:15 instead.", "u"),
    ], now=["When do I collect Mila from school?"], prev=[("Which day did I pick up Mila before my sister swapped?", 1)]),
    Chain("bank", [
        V("Main account is at Sparkasse, salary goes there."),
        V("Moved the salary account to DKB, the Sparkasse fees got silly.", "d", "fees"),
    ], now=["Which bank does my salary land in?"]),
    Chain("phone-plan", [
        V("Phone contract is O2, 20 GB for 25 a month."),
        V("Changed to a Fraenk SIM, 15 GB for 10 euros, cancelled O2.", "u"),
    ], now=["Who is my mobile provider?"]),
], stable=[
    Stable("tom-birthday", "My birthday is November 3.", ["When is my birthday?"]),
    Stable("tom-tax-id", "Tax adviser is Frau Roth, she does my return every May.", ["Who prepares my tax return?"]),
    Stable("tom-lang", "Please answer me in English even when I write in German.", ["Which language should you reply in?"], kind="preference"),
], comps=[
    Comp("duolingo", "Also doing 15 minutes of Duolingo Spanish every night.", "spanish-class", ["What else do I do to practise Spanish?"]),
    Comp("charging", "The Enyaq charges at the Aldi lot on Sundays, free up to 22 kW.", "car-lease", ["Where do I charge the car?"]),
], contras=[
    Contra("spanish-level", "My Spanish teacher says I'm at A2.", "The placement test put me at B1 in Spanish.", ["What's my Spanish level?"]),
], chat=[
    "hola! ok that's about all I know", "long day, just venting", "the canal route is so nice in the morning",
    "can you remind me what I said about the car?", "Mila told me a joke about dinosaurs, it was terrible", "my legs are dead after leg day",
    "I should ask for the raise in writing", "do you know how lease swaps usually work?", "ugh, Monday", "gonna cook pasta tonight",
])

C06 = Conv("c06", "lena", None, "2026-01-19", 80, 100, "Lena's family logistics", chains=[
    Chain("mother-visit", [
        V("Mum is visiting from Porto March 14 to 28.", kind="plan"),
        V("Mum changed her flight, she's here March 21 to April 4 now.", "u", kind="plan", restate=["mum arrives the 21st of March and leaves April 4"]),
    ], now=["When is my mother staying with us?"], prev=[("What were mum's dates before she changed her flight?", 0)], kind="plan"),
    Chain("kid-allergy", [
        V("Noah is allergic to peanuts, mild reactions so far."),
        V("Allergist retested Noah: peanut allergy is gone, but he reacts to cashews now.", "u"),
    ], now=["What is Noah allergic to?"], prev=[("What allergy did Noah have before the retest?", 0)]),
    Chain("book-club", [
        V("Book club is the first Thursday of the month at Anke's."),
        V("Book club moved to the last Sunday of the month, brunch at Café Lotte.", "u"),
    ], now=["When and where does my book club meet?"], prev=[("Where did book club meet before it moved to Café Lotte?", 0)]),
    Chain("bike-commute", [
        V("I bike to the lab every day, 25 minutes."),
        V("Broke my wrist, so it's the U7 to work for the next six weeks.", "u"),
    ], now=["How am I getting to work at the moment?"]),
    Chain("childcare", [
        V("Noah's Kita hours are 8 to 15:00."),
        V("Got the extended place: Noah can stay at Kita until 16:30 now.", "u"),
    ], now=["Until what time can Noah stay at daycare?"], prev=[("What were Noah's daycare hours before the extended place?", 0)]),
    Chain("babysitter", [
        V("Babysitter is Jule, Fridays 18 to 22, 14 an hour."),
        V("Jule started uni, our new sitter is Merve, Fridays same hours, 15 an hour.", "u"),
    ], now=["Who babysits for us on Fridays?"], prev=[("Who was our sitter before Merve?", 0)]),
    Chain("swim-lessons", [
        V("Signed Noah up for swim lessons on Saturdays at 10 at the Stadtbad.", kind="plan"),
        V("Swim lessons switched to Wednesday afternoons at 16:00, Saturdays were full.", "u", kind="plan"),
    ], now=["When does Noah have swimming?"], kind="plan"),
    Chain("family-car", [
        V("We share car with the Müllers through the neighbourhood car-sharing, booking via the app."),
        V("We bought a used Toyota Yaris hybrid, no more car-sharing.", "d", "own car now"),
    ], now=["How does our family get around by car?"]),
], stable=[
    Stable("noah-birthday", "Noah's birthday is June 8, he'll be five.", ["When is Noah's birthday?"]),
    Stable("partner", "My partner is Daniel, he works nights at the hospital on weekends.", ["When does Daniel work nights?"]),
    Stable("lena-pediatrician", "Noah's pediatrician is Dr. Okafor on Schönhauser Allee.", ["Which children's doctor does Noah see?"]),
], comps=[
    Comp("egg-allergy", "Also, Noah can't have raw egg, cooked egg in cakes is fine.", "kid-allergy", ["What's the rule about eggs for Noah?"]),
    Comp("mum-room", "Mum sleeps in the study, the sofa bed, while she's here.", "mother-visit", ["Where does mum sleep when she visits?"]),
], contras=[
    Contra("kita-closure", "Kita is closed for the summer from July 20.", "Daniel thinks the Kita summer closure starts August 3.", ["When does daycare shut for summer?"]),
], chat=[
    "Noah painted the cat blue, literally", "wrist hurts today", "can you keep track of all the family stuff for me?", "long week at the lab",
    "mum is bringing so much food from Porto haha", "what did I say Noah's allergy was again?", "Daniel says hi",
    "we need a bigger fridge", "bedtime took an hour tonight", "the cast comes off in May hopefully",
])

C07 = Conv("c07", "lena", None, "2026-02-16", 70, 92, "Lena's pottery side business", chains=[
    Chain("mug-price", [
        V("Selling my mugs for 28 euros each on Etsy."),
        V("Raised mug prices to 34, clay went up and they sell out anyway.", "u", restate=["mugs are 34 euros now"]),
    ], now=["How much do my mugs sell for?"], prev=[("What did the mugs cost before the price rise?", 0)]),
    Chain("market-day", [
        V("Market stall at the Kollwitzplatz market on Saturdays.", kind="plan"),
        V("Moved my stall to the Thursday evening market at Markthalle Neun, Saturdays clash with Noah's football.", "u", kind="plan"),
    ], now=["Which day and market do I have my stall at?"], prev=[("Where did I have the stall before Markthalle Neun?", 0)], kind="plan"),
    Chain("clay-supplier", [
        V("Clay comes from Keramikbedarf Schmidt, 12 a bag."),
        V("Switched clay to Goerg & Schneider through the co-op, 10.50 a bag delivered.", "u"),
    ], now=["Where do I buy my clay?"]),
    Chain("kiln", [
        V("Firing at the community studio kiln, 15 per load."),
        V("Bought a second-hand kiln, it's in the basement, so no more studio firing fees.", "u"),
    ], now=["Where do I fire my pieces?"], prev=[("How did I fire my pottery before buying a kiln?", 0)]),
    Chain("shipping", [
        V("Shipping with DHL, 6.99 per parcel inside Germany."),
        V("Using Hermes now, 4.95 per parcel, DHL kept damaging boxes.", "u"),
    ], now=["Which courier do I ship orders with?"], prev=[("Which shipping service did I use before the switch?", 0)]),
    Chain("shop-hours", [
        V("I answer shop messages on weekday evenings only, 20 to 21:00."),
        V("Shop messages: Sunday mornings only, I'm too tired in the evenings.", "u"),
    ], now=["When do I reply to customer messages?"]),
    Chain("tax-status", [
        V("Registered the pottery as a Kleinunternehmer, no VAT charged."),
        V("Crossed the revenue limit, so from January I charge 19% VAT on everything.", "d", "revenue limit passed"),
    ], now=["Do I charge VAT on my pottery?"]),
    Chain("glaze", [
        V("Signature glaze is the speckled oatmeal from Amaco."),
        V("Signature glaze is now my own celadon mix, the Amaco oatmeal got discontinued.", "u"),
    ], now=["What's my signature glaze?"]),
], stable=[
    Stable("shop-name", "The shop is called Lehm & Linie on Etsy.", ["What's the name of my shop?"]),
    Stable("bowl-price", "Bowls sell for 22 euros.", ["How much are the bowls?"]),
    Stable("return-policy", "Returns accepted within 14 days, buyer pays shipping.", ["What is the returns policy for the shop?"]),
], comps=[
    Comp("plate-price", "Dinner plates are 38 each, sets of four for 140.", "mug-price", ["What do the plates cost?"]),
    Comp("insta", "New pieces are announced on Instagram @lehmundlinie on Sunday evenings.", "shop-name", ["Where do I announce new work?"]),
], contras=[
    Contra("firing-temp", "Cone 6 firing, 1222 degrees, for the stoneware.", "Stoneware body from the co-op says fire to 1260.", ["What temperature do I fire the stoneware at?"]),
], chat=[
    "three mugs cracked in the kiln today, crying", "a customer sent me a photo of her tea in my mug, so cute", "clay everywhere in the flat",
    "is 34 too much for a mug?", "sold out again!", "I need better photos for the listings", "how do I price a teapot?",
    "wrist is slowing me down at the wheel", "Noah made a tiny bowl, it's wonky and perfect",
])

C16 = Conv("c16", "tom", None, "2026-03-16", 60, 90, "Tom renovates the kitchen", chains=[
    Chain("contractor", [
        V("Kitchen renovation by Bau & Form GmbH, contact Herr Yilmaz."),
        V("Fired Bau & Form after they missed two appointments, we hired Handwerk Kiez instead, contact Ms. Novak.", "u"),
    ], now=["Which company is doing the kitchen?"], prev=[("Which contractor did we have before Handwerk Kiez?", 0)]),
    Chain("kitchen-budget", [
        V("Budget for the kitchen is 18,000."),
        V("Kitchen budget goes to 21,500 because the wiring has to be redone.", "u"),
    ], now=["How much is the kitchen allowed to cost?"], prev=[("What was the kitchen budget before the wiring problem?", 0)]),
    Chain("tiles", [
        V("Going with white metro tiles for the backsplash."),
        V("Priya found green zellige tiles, we're doing those for the backsplash instead.", "u"),
    ], now=["What tiles are going on the backsplash?"]),
    Chain("done-date", [
        V("Kitchen should be done by April 20.", kind="plan"),
        V("New finish date for the kitchen is May 8.", "u", kind="plan"),
        V("Handwerk Kiez says May 22 at the earliest, the worktop is delayed.", "u", kind="plan"),
    ], now=["When will the kitchen be finished?"], prev=[("What finish date did we have before the worktop delay?", 1)], kind="plan"),
    Chain("worktop", [
        V("Worktop is oak, oiled."),
        V("Changed the worktop to a quartz composite, oak is too fussy with the sink.", "u"),
    ], now=["What material is the countertop?"]),
    Chain("oven", [
        V("Oven: Bosch Series 6 with steam."),
        V("The Bosch is out of stock until summer, ordered the Neff Slide&Hide instead.", "u"),
    ], now=["Which oven did we order?"]),
], stable=[
    Stable("flat-owner", "We own the flat, so no landlord approval needed for the kitchen.", ["Do I need anyone's permission for the renovation?"]),
    Stable("electrician", "Electrician is Kai Brandt, he's licensed for the new circuit.", ["Who's our electrician?"]),
], comps=[
    Comp("fridge", "Keeping the old fridge, it's only two years old.", "oven", ["Are we replacing the fridge too?"]),
], contras=[
    Contra("sink-side", "Sink goes under the window.", "Priya wants the sink on the island.", ["Where will the sink be?"]),
], chat=[
    "eating takeaway every night, send vegetables", "the dust gets everywhere", "Priya and I argued about handles for an hour",
    "what did we decide about the tiles again?", "the old cabinets are out!", "microwave dinners on the balcony, romantic",
])
