from dsl import V, Chain, Stable, Comp, Contra, Conv

C12 = Conv("c12", "lena", "harbor", "2026-02-02", 75, 110, "Harbor infrastructure", chains=[
    Chain("node-count", [
        V("Harbor's Kubernetes cluster runs 6 worker nodes, m6i.2xlarge."),
        V("Scaled the cluster to 9 nodes for the backfill.", "u"),
        V("Back down to 5 nodes, and Karpenter handles scaling from now on.", "u", user="maya"),
    ], now=["How many nodes does the Harbor cluster have?"], prev=[("How many nodes were there during the backfill?", 1)], asker="maya"),
    Chain("backup-schedule", [
        V("Postgres metadata DB is backed up daily at 01:00 UTC."),
        V("Metadata DB backups every 4 hours now, after the incident.", "u", restate=["backups every four hours for the metadata database"]),
    ], now=["How often is the metadata database backed up?"], prev=[("What was the backup schedule before the incident?", 0)]),
    Chain("disk-alert", [
        V("Disk usage alert fires at 80% on all nodes."),
        V("Disk alert threshold lowered to 70%, 80 was too late for the log volumes.", "u"),
    ], now=["At what disk fill level do we get alerted?"], prev=[("What was the disk alert threshold before it was lowered?", 0)]),
    Chain("vendor", [
        V("Managed Kafka is Confluent Cloud, contract renews in June."),
        V("We're moving Kafka to AWS MSK, Confluent is cancelled at renewal.", "u"),
    ], now=["Who provides our Kafka?"], prev=[("Which Kafka vendor did we have before MSK?", 0)], asker="maya"),
    Chain("incident-contact", [
        V("Infra incident commander this quarter is Lena."),
        V("Incident commander rotation handed over to Bram for Q2.", "u"),
    ], now=["Who leads infrastructure incidents right now?"]),
    Chain("k8s-version", [
        V("Cluster is on Kubernetes 1.28."),
        V("Upgraded the cluster to 1.30 over the weekend.", "d", "upgrade"),
    ], now=["Which Kubernetes version is the cluster on?"]),
    Chain("maintenance-window", [
        V("Maintenance window is Sundays 22:00 to 02:00 CET."),
        V("Maintenance window moved to Tuesdays 06:00 to 08:00 CET, fewer jobs running then.", "u"),
    ], now=["When is the infrastructure maintenance window?"], prev=[("When was maintenance scheduled before the move to Tuesdays?", 0)], asker="maya"),
    Chain("ingress", [
        V("Ingress is nginx-ingress with cert-manager."),
        V("Replaced nginx-ingress with the AWS Load Balancer Controller, cert-manager stays for internal certs.", "u"),
    ], now=["What ingress setup does Harbor use?"]),
    Chain("tf-state", [
        V("Terraform state lives in S3 bucket harbor-tfstate with DynamoDB locking."),
        V("Terraform state moved to Terraform Cloud workspace harbor-prod.", "u"),
    ], now=["Where is the Terraform state kept?"]),
    Chain("gpu", [
        V("No GPU nodes in Harbor.", kind="decision"),
        V("Added a GPU node pool with two g5.xlarge for the embedding jobs.", "u", kind="decision"),
    ], now=["Do we have GPU capacity in the cluster?"], kind="decision"),
], stable=[
    Stable("vpn", "Cluster API is only reachable over the Tailscale tailnet harbor-ops.", ["How do I reach the cluster API?"]),
    Stable("runbook", "Runbooks live in the harbor-runbooks repo, one file per alert.", ["Where are the runbooks?"]),
    Stable("tagging", "Every AWS resource needs the tags team, env and cost-center.", ["Which tags are mandatory on cloud resources?"], kind="lesson",
           restate=["don't forget team/env/cost-center tags on everything in AWS"]),
], comps=[
    Comp("memory-alert", "Memory alert fires at 90% for 10 minutes.", "disk-alert", ["When does the memory alert fire?"]),
    Comp("staging-nodes", "Staging cluster stays at 2 nodes, no autoscaling.", "node-count", ["How many nodes does staging have?"], user="maya"),
], contras=[
    Contra("dr-region", "Disaster recovery region is eu-central-1.", "DR for Harbor is planned in eu-north-1.", ["Which region is our disaster recovery site?"], user_b="maya"),
], chat=[
    "pager was quiet last night for once", "can you list what's in the maintenance window?", "Bram did great on the incident",
    "the backfill is eating all the disk", "Karpenter is magic honestly", "what threshold did we set for disk?",
    "terraform plan shows 40 changes, scary", "coffee and YAML", "MSK migration kickoff tomorrow",
])

C13 = Conv("c13", "lena", "orchard", "2026-01-26", 85, 112, "Orchard nonprofit website", chains=[
    Chain("donation-provider", [
        V("Donations on the Orchard site go through PayPal Giving Fund."),
        V("We switched donations to Stripe with a custom form, PayPal fees were too high.", "u"),
        V("Donations now run through Donorbox on top of Stripe, the custom form kept breaking.", "u"),
    ], now=["What processes online donations for Orchard?"], prev=[("What did we use for donations before Donorbox?", 1)]),
    Chain("volunteer-coord", [
        V("Volunteer coordinator is Greta, greta@orchard-verein.de."),
        V("Greta stepped down; volunteers now contact Yusuf at volunteers@orchard-verein.de.", "u", restate=["volunteer contact is Yusuf now, volunteers@orchard-verein.de"]),
    ], now=["Who coordinates the volunteers?"], prev=[("Who was the volunteer coordinator before Yusuf?", 0)]),
    Chain("gala-date", [
        V("Spring gala is on May 16 at the community hall.", kind="plan"),
        V("Gala moved to June 6, the hall had a double booking.", "u", kind="plan"),
    ], now=["When is the spring gala?"], prev=[("What was the gala date before the hall problem?", 0)], kind="plan"),
    Chain("hosting", [
        V("The website is hosted on Strato, shared hosting plan."),
        V("Moved the site to Netlify, it's a static build now.", "u"),
    ], now=["Where is the Orchard website hosted?"]),
    Chain("newsletter-day", [
        V("Newsletter goes out on the first Monday of the month."),
        V("Newsletter is every second Friday now, open rates were better on Fridays.", "u"),
    ], now=["When do we send the newsletter?"], prev=[("When did the newsletter go out before we changed the schedule?", 0)]),
    Chain("cms", [
        V("Site content is edited in WordPress."),
        V("Content editing moved to Decap CMS on the static site, WordPress is shut down.", "u"),
    ], now=["Where do volunteers edit website content?"]),
    Chain("domain", [
        V("Domain is orchard-verein.de, renewed yearly with Strato."),
        V("Transferred the domain to INWX, auto-renew on.", "u"),
    ], now=["Which registrar holds our domain?"]),
    Chain("site-lang", [
        V("Website is German only for now.", kind="decision"),
        V("We're adding English and Arabic pages, launch with the gala.", "u", kind="decision"),
    ], now=["Which languages is the website in?"], kind="decision"),
    Chain("donation-goal", [
        V("Fundraising goal for this year is 40,000 euros."),
        V("Board raised the yearly fundraising target to 55,000 after the grant fell through.", "u"),
    ], now=["What's this year's fundraising target?"], prev=[("What was the fundraising goal before the board raised it?", 0)]),
], stable=[
    Stable("charity-id", "Orchard e.V. is registered at Amtsgericht Charlottenburg, VR 34512.", ["What's the association's registration number?"]),
    Stable("bank-orchard", "Donations by transfer go to the GLS Bank account, IBAN ending 4471.", ["Where can people send a bank transfer donation?"]),
    Stable("privacy", "No tracking cookies on the site, only cookieless Plausible.", ["Do we use tracking cookies on the website?"], kind="decision"),
], comps=[
    Comp("receipts", "Donation receipts for tax go out automatically in January.", "donation-provider", ["When do donors get their tax receipts?"]),
    Comp("gala-tickets", "Gala tickets are 45, students 20, sold through Pretix.", "gala-date", ["How much are gala tickets?"]),
], contras=[
    Contra("volunteer-age", "Volunteers must be 18 or older.", "Volunteers from 16 can join with a parent's signature.", ["How old do volunteers have to be?"]),
], chat=[
    "board meeting ran long again", "the new site is so much faster", "can you draft a thank-you note for donors?",
    "Yusuf is doing a great job", "what's the gala date again?", "printing flyers this week", "Greta sent a lovely goodbye mail",
    "the Arabic translation is almost done", "someone donated 1,000 euros anonymously!",
])

C14 = Conv("c14", "lena", "orchard", "2026-03-02", 60, 90, "Orchard grants and board", chains=[
    Chain("grant-deadline", [
        V("The Lottery Foundation grant application is due March 31.", kind="plan"),
        V("Foundation extended the grant deadline to April 21.", "u", kind="plan"),
    ], now=["When is the grant application due?"], prev=[("What was the original grant deadline?", 0)], kind="plan"),
    Chain("grant-amount", [
        V("We're asking the foundation for 25,000 euros."),
        V("Reduced the grant request to 18,000, the max for first-time applicants.", "u"),
    ], now=["How much are we requesting in the grant?"]),
    Chain("board-meeting", [
        V("Board meets on the second Wednesday of each month at 19:00."),
        V("Board meetings moved online, first Tuesday of the month at 20:00.", "u"),
    ], now=["When does the board meet?"], prev=[("When did the board meet before going online?", 0)]),
    Chain("printer", [
        V("Flyers are printed at Copyshop Mitte."),
        V("We print with Umweltdruckerei now, recycled paper, same price.", "u"),
    ], now=["Who prints our flyers?"]),
    Chain("treasurer", [
        V("Treasurer is Anton Klein."),
        V("Anton resigned, the new treasurer is Fatma Aksoy.", "d", "elected at the general assembly"),
    ], now=["Who is our treasurer?"], prev=[("Who was treasurer before Fatma?", 0)]),
    Chain("annual-fee", [
        V("Membership fee is 36 euros a year."),
        V("General assembly set the membership fee to 48 a year, reduced 24.", "u"),
    ], now=["How much is the annual membership fee?"]),
    Chain("office-space", [
        V("We use a desk at the Nachbarschaftshaus on Mondays.", kind="fact"),
        V("Orchard has its own small office in the Werkhof now, keys with Fatma.", "u"),
    ], now=["Where does Orchard work from?"]),
], stable=[
    Stable("statutes", "The statutes require a two-thirds majority to change the purpose.", ["What majority is needed to change the association's purpose?"]),
    Stable("members", "Orchard has about 140 paying members.", ["How many members do we have?"]),
], comps=[
    Comp("second-grant", "We're also applying to the city's Kiezfonds for 5,000, deadline May 15.", "grant-deadline", ["Which other grant are we applying for?"]),
], contras=[
    Contra("quorum", "Board quorum is three members.", "Fatma says quorum is half the board, so four.", ["How many board members make a quorum?"]),
], chat=[
    "grant writing is exhausting", "Fatma already found two accounting errors", "can you check the budget table?",
    "the Werkhof office is tiny but ours", "what did the foundation say about the deadline?", "ordered new flyers",
])

C15 = Conv("c15", "maya", "harbor", "2026-03-09", 60, 96, "Harbor migration to the new warehouse", chains=[
    Chain("cutover", [
        V("Cutover from Redshift to Snowflake is planned for April 6.", kind="plan"),
        V("Cutover pushed to April 20, the finance models aren't validated yet.", "u", kind="plan", restate=["new cutover date: 20 April"]),
        V("Cutover is May 4, agreed with finance in the steering meeting.", "d", "steering decision", kind="plan"),
    ], now=["When do we switch over from Redshift?"], prev=[("Which cutover date did we have before May 4?", 1)], kind="plan", asker="lena"),
    Chain("migration-owner", [
        V("Migration lead is Arjun."),
        V("Arjun is out sick for a while, Maya leads the migration in the meantime.", "u"),
    ], now=["Who is leading the warehouse migration?"], prev=[("Who led the migration before Maya took over?", 0)], asker="lena"),
    Chain("parallel-run", [
        V("We run Redshift and Snowflake in parallel for 2 weeks after cutover."),
        V("Parallel run extended to 4 weeks, finance wants a full month-end on both.", "u"),
    ], now=["How long do both warehouses run side by side?"]),
    Chain("validation", [
        V("Validation rule: row counts must match within 0.1%."),
        V("Validation is stricter now: row counts exact and sums of amounts within 0.01%.", "u"),
    ], now=["What are the validation rules for migrated tables?"]),
    Chain("redshift-shutdown", [
        V("Redshift cluster gets deleted end of May.", kind="plan"),
        V("Redshift stays as a paused snapshot until end of July for audit.", "u", kind="plan"),
    ], now=["What happens to the old Redshift cluster and when?"], kind="plan"),
    Chain("migration-tool", [
        V("Data copied with a custom Python script per table."),
        V("Using Fivetran's Redshift connector for the bulk copy now, the script was too slow.", "u"),
    ], now=["How is data being copied to Snowflake?"]),
    Chain("models-migrated", [
        V("42 of 180 dbt models are migrated."),
        V("112 of 180 models migrated, finance ones are next.", "u"),
        V("All 180 models are migrated, only validation left.", "u"),
    ], now=["How many models have been moved over?"], prev=[("How far along was the model migration before the finance ones?", 1)]),
], stable=[
    Stable("migration-channel", "Migration updates go in #harbor-migration, weekly status on Fridays.", ["Where are migration updates posted?"]),
    Stable("steering", "Steering group: Maya, Selin, and the CFO's office.", ["Who is on the migration steering group?"]),
], comps=[
    Comp("dbt-adapter", "dbt-snowflake adapter pinned to 1.8 to match dbt core.", "migration-tool", ["Which dbt adapter version do we use for Snowflake?"]),
], contras=[
    Contra("sf-edition", "We bought Snowflake Enterprise edition.", "Finance says the contract is Business Critical edition.", ["Which Snowflake edition do we have?"], user_b="lena"),
], chat=[
    "migration standup done", "can you summarise the migration status?", "validation diffs are scary",
    "Arjun, get well soon", "finance keeps moving the goalposts", "when was cutover again?",
    "Fivetran is way faster", "month-end crunch starting",
])
