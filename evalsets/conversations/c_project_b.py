from dsl import V, Chain, Stable, Comp, Contra, Conv

C10 = Conv("c10", "tom", "atlas", "2026-02-03", 75, 104, "Atlas product and launch", chains=[
    Chain("launch-date", [
        V("Public launch of Atlas Premium is planned for April 14.", kind="plan"),
        V("Premium launch slips to May 5, payments integration isn't ready.", "u", kind="plan"),
        V("Premium launch confirmed for May 19 with the marketing campaign.", "d", "aligned with marketing", kind="plan"),
    ], now=["When does Premium go live?"], prev=[("Which launch date did Premium have before the payments delay?", 0)], kind="plan", asker="maya"),
    Chain("premium-price", [
        V("Premium will cost 4.99 a month or 39.99 a year."),
        V("Pricing changed after the survey: 6.99 a month, 49.99 a year.", "u", restate=["so Premium is 6.99 monthly or 49.99 yearly now"]),
    ], now=["How much does Atlas Premium cost?"], prev=[("What price did we plan for Premium before the survey?", 0)]),
    Chain("onboarding-steps", [
        V("Onboarding has 5 screens: welcome, goals, notifications, account, paywall."),
        V("Onboarding cut to 3 screens: goals, account, paywall, the rest moved into settings.", "u"),
    ], now=["How many steps does onboarding have?"], prev=[("What did onboarding look like before we cut it down?", 0)]),
    Chain("trial", [
        V("Premium trial is 7 days."),
        V("Extended the Premium trial to 14 days, conversion looked better in the test.", "u"),
    ], now=["How long is the free trial of Premium?"]),
    Chain("pm-owner", [
        V("Product owner for Premium is Clara."),
        V("Clara's on parental leave, Premium product decisions go to Jonas Weber until August.", "u", user="maya"),
    ], now=["Who makes product calls on Premium?"], prev=[("Who owned Premium before the leave?", 0)], asker="maya"),
    Chain("copy-tone", [
        V("App copy tone: friendly but formal, we use 'Sie' in German.", kind="decision"),
        V("Switching German copy to 'du', the brand team wants it more casual.", "u", kind="decision"),
    ], now=["Do we address German users formally or informally?"], kind="decision"),
    Chain("paywall-position", [
        V("Paywall shows after onboarding, skippable."),
        V("Paywall only shows on the third app open now, not right after onboarding.", "u"),
    ], now=["When does a new user first see the paywall?"]),
    Chain("family-plan", [
        V("No family plan at launch.", kind="decision"),
        V("Family plan is in for launch after all: up to 5 people for 9.99 a month.", "u", kind="decision"),
    ], now=["Is there a family plan and what does it cost?"], prev=[("What was the original decision on a family plan?", 0)], kind="decision"),
    Chain("payment-provider", [
        V("In-app purchases handled through RevenueCat."),
        V("Dropped RevenueCat, we call StoreKit 2 and Play Billing directly.", "u"),
    ], now=["What handles subscriptions in the app?"]),
], stable=[
    Stable("target-market", "Premium launches in DACH first, other markets later.", ["Which countries get Premium first?"]),
    Stable("premium-features", "Premium unlocks offline maps, unlimited routes and export to GPX.", ["What do paying users get?"],
           restate=["Premium = offline maps + unlimited routes + GPX export"]),
    Stable("support-mail", "Support inbox is help@atlasapp.io, answered within one business day.", ["How do users reach support?"]),
], comps=[
    Comp("student-price", "Students get Premium for 2.99 a month with UNiDAYS verification.", "premium-price", ["Is there a student discount?"]),
    Comp("paywall-copy", "Paywall copy A/B test: 'Go further' versus 'Unlock everything'.", "paywall-position", ["Which paywall headlines are we testing?"]),
], contras=[
    Contra("refunds", "Refunds for Premium are handled by the stores, we don't issue them.", "We refund Premium directly within 14 days if users email support.", ["How do refunds for Premium work?"], user_b="maya"),
], chat=[
    "the survey results are in!", "marketing wants a launch video, fun", "can you list the open launch items?",
    "I think 6.99 is fair honestly", "Clara's baby arrived, so cute", "the paywall test is looking good",
    "writing the press kit today", "what did we say about the trial length?",
])

C11 = Conv("c11", "maya", "harbor", "2026-01-20", 80, 116, "Harbor data platform", chains=[
    Chain("etl-schedule", [
        V("Nightly ETL into the warehouse starts at 02:00 UTC."),
        V("Moved the nightly load to 04:00 UTC, the source DB backups run at 2.", "u", user="lena"),
        V("ETL runs every 6 hours now instead of nightly: 00, 06, 12, 18 UTC.", "u"),
    ], now=["When do the warehouse loads run?", "How often is data loaded into Harbor?"],
       prev=[("When did the nightly load start before it went to every six hours?", 1)], asker="lena"),
    Chain("retention", [
        V("Raw event data is kept for 90 days in Harbor."),
        V("Legal wants raw events kept 400 days, retention raised accordingly.", "u", restate=["raw events retention is 400 days now, legal request"]),
    ], now=["How long do we keep raw events?"], prev=[("What was raw data retention before the legal request?", 0)]),
    Chain("warehouse-size", [
        V("Warehouse is Snowflake, MEDIUM warehouse for transforms."),
        V("Transforms warehouse bumped to LARGE for month-end, then back to MEDIUM.", "u"),
        V("We split it: transforms on a SMALL warehouse with auto-scaling up to 3 clusters.", "u", user="lena"),
    ], now=["What size is the transform warehouse?"], prev=[("How was the transform warehouse sized before we split it?", 1)]),
    Chain("dash-owner", [
        V("Revenue dashboards are owned by Hugo in finance analytics."),
        V("Ownership of revenue dashboards moved to Selin, Hugo moved to pricing.", "u"),
    ], now=["Who owns the revenue dashboards?"], prev=[("Who looked after revenue dashboards before Selin?", 0)], asker="lena"),
    Chain("freshness-sla", [
        V("Data freshness SLA: dashboards updated by 07:00 CET."),
        V("Freshness SLA is now 6 hours max lag for all tier-1 tables.", "u"),
    ], now=["What's our data freshness promise?"]),
    Chain("dbt-version", [
        V("dbt is on 1.6."),
        V("Upgraded dbt to 1.8, the unit tests work now.", "d", "upgrade done"),
    ], now=["Which dbt version do we run?"]),
    Chain("bi-tool", [
        V("Dashboards are in Metabase."),
        V("Moving BI from Metabase to Looker Studio is done, Metabase is read-only until March.", "u"),
    ], now=["Which BI tool do people use for dashboards?"], prev=[("What did we use for dashboards before Looker Studio?", 0)]),
    Chain("pii-access", [
        V("PII columns are visible to the data team role."),
        V("PII columns are masked for everyone except the privacy role, even for the data team.", "u", user="lena"),
    ], now=["Who can see personal data columns in the warehouse?"]),
    Chain("alert-channel", [
        V("Pipeline failures alert in #harbor-alerts."),
        V("Pipeline alerts go to PagerDuty service harbor-data now, Slack only gets a summary.", "u"),
    ], now=["Where do pipeline failure alerts go?"]),
    Chain("cost-cap", [
        V("Snowflake spend cap is 8,000 credits a month."),
        V("Cut the Snowflake cap to 6,000 credits after the cost review.", "u"),
    ], now=["What is our monthly warehouse credit cap?"], prev=[("What was the credit cap before the cost review?", 0)]),
], stable=[
    Stable("orchestrator", "Harbor pipelines are orchestrated with Dagster.", ["Which tool orchestrates the data pipelines?"]),
    Stable("naming", "Model naming: stg_ for staging, int_ for intermediate, fct_ and dim_ for marts.", ["What's the naming convention for dbt models?"],
           restate=["naming rule: stg_, int_, then fct_/dim_ in the marts"]),
    Stable("late-data", "Late-arriving events are merged within 3 days, older ones go to a quarantine table.", ["What happens to events that arrive very late?"]),
], comps=[
    Comp("retention-agg", "Aggregated tables are kept forever, only raw data expires.", "retention", ["How long do we keep aggregated tables?"]),
    Comp("marketing-dash", "Marketing dashboards are owned by Pia, separate from revenue.", "dash-owner", ["Who owns the marketing dashboards?"], user="lena"),
], contras=[
    Contra("timezone", "Dashboards report in UTC.", "All finance dashboards show Berlin time, not UTC.", ["Which timezone do the dashboards use?"], user_b="lena"),
], chat=[
    "the ETL failed again last night", "Snowflake bill came in, ouch", "can you summarise the open data issues?",
    "Selin is picking things up fast", "what did we decide about retention?", "month-end close is always painful",
    "writing docs for the new models", "dagster UI is down, restarting it", "meeting with legal at 3",
])
