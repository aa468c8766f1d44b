from dsl import V, Chain, Stable, Comp, Contra, Conv

C08 = Conv("c08", "maya", "atlas", "2026-01-07", 85, 126, "Atlas mobile app releases", chains=[
    Chain("release-day", [
        V("Atlas app releases go to the stores every second Tuesday.", restate=["we ship Atlas to the App Store and Play every other Tuesday"]),
        V("Release train for Atlas moved to Thursdays, every two weeks, so QA has the Wednesday.", "u"),
        V("We're going weekly: every Thursday morning Atlas goes out to both stores.", "u", user="tom"),
    ], now=["On which day does the mobile app ship, and how often?", "How often do we push Atlas builds to the stores?"],
       prev=[("What was the release cadence before we went weekly?", 1)], asker="tom"),
    Chain("min-ios", [
        V("Atlas supports iOS 15 and up."),
        V("Dropping iOS 15: minimum is iOS 16 from the 4.2 release.", "d", "usage under 2%"),
    ], now=["What's the oldest iPhone OS version Atlas still runs on?"], prev=[("Which iOS version did we require before 4.2?", 0)]),
    Chain("flag-rollout", [
        V("New onboarding flag is on for 10% of Android users."),
        V("Onboarding flag ramped to 50% on Android and 10% on iOS.", "u"),
        V("New onboarding is at 100% everywhere, the flag can be removed next sprint.", "u", user="tom"),
    ], now=["How far is the new onboarding rolled out?"], prev=[("What percentage of Android users had new onboarding before the full rollout?", 1)]),
    Chain("analytics", [
        V("Atlas analytics events go to Mixpanel, project atlas-prod."),
        V("We moved Atlas analytics to Amplitude, the Mixpanel contract ends in March.", "u", restate=["analytics for the app is Amplitude now, not Mixpanel"]),
    ], now=["Which analytics tool collects Atlas events?"], prev=[("Where did app analytics go before Amplitude?", 0)], asker="tom"),
    Chain("qa-owner", [
        V("QA sign-off for releases is done by Dario."),
        V("Dario left, release QA sign-off is Aisha now.", "u"),
    ], now=["Who signs off QA before a store release?"], prev=[("Who did release QA before Aisha?", 0)]),
    Chain("crash-budget", [
        V("Release gate: crash-free sessions must be above 99.5%."),
        V("Tightened the release gate to 99.8% crash-free sessions.", "u"),
    ], now=["What crash-free threshold blocks a release?"]),
    Chain("beta-group", [
        V("TestFlight beta group has 200 external testers."),
        V("Expanded TestFlight to 1,000 external testers for the 4.3 beta.", "u"),
    ], now=["How many people are in the iOS beta?"]),
    Chain("build-tool", [
        V("Builds run on Bitrise, workflow atlas-release."),
        V("Atlas builds moved from Bitrise to GitHub Actions with macOS runners, Bitrise is cancelled.", "u", user="tom"),
    ], now=["Where do Atlas release builds run?"], prev=[("Which CI built the app before GitHub Actions?", 0)]),
    Chain("app-version", [
        V("Current Atlas version in the stores is 4.1.2."),
        V("4.2.0 is live in both stores.", "u"),
        V("Atlas 4.3.1 is out on iOS and Android.", "u"),
    ], now=["Which Atlas version is live right now?"], prev=[("Which version was in the stores before 4.3.1?", 1)]),
    Chain("hotfix-policy", [
        V("Hotfixes need approval from the mobile lead, that's me."),
        V("Hotfix approval moved to whoever is release captain that week.", "u"),
    ], now=["Who approves an emergency app patch?"]),
], stable=[
    Stable("bundle-id", "Atlas bundle id is com.atlasapp.mobile on both platforms.", ["What's the app identifier of the mobile app?"]),
    Stable("store-account", "App Store Connect account belongs to Atlas Labs GmbH, team id 7XK2Q9.", ["Which developer account publishes the iPhone app?"]),
    Stable("rn-version", "The app is React Native with the new architecture enabled.", ["Which framework is the mobile client built with?"]),
    Stable("store-review", "Always submit to Apple review by Monday noon to make a Thursday release.", ["By when must a build go into Apple review?"], kind="lesson"),
], comps=[
    Comp("min-android", "Android minimum is API level 26 (Android 8).", "min-ios", ["What's the lowest Android version supported?"]),
    Comp("web-analytics", "The marketing website keeps Plausible for analytics, separate from the app.", "analytics", ["What do we use for analytics on the marketing site?"]),
    Comp("android-qa", "Android device testing runs on Firebase Test Lab before Aisha signs off.", "qa-owner", ["Where is the Android device testing done?"], user="tom"),
], contras=[
    Contra("tablet", "Atlas does not support iPad, it's phone only.", "Atlas runs on iPad in compatibility mode and we do support it.", ["Is the iPad supported?"], user_b="tom"),
], chat=[
    "release day chaos as usual", "can you summarize what's shipping this week?", "Apple rejected us again for the login screen, sigh",
    "coffee first, then release notes", "what did we decide about the beta group?", "Tom is on holiday next week",
    "the store screenshots need updating", "I'll write the changelog later", "reviews are mostly positive this week",
    "who's release captain this week?", "the Android build is green finally", "ok going into the planning meeting",
])

C09 = Conv("c09", "tom", "atlas", "2026-01-14", 80, 118, "Atlas backend settings", chains=[
    Chain("rate-limit", [
        V("Atlas API rate limit is 60 requests per minute per user."),
        V("Raised the per-user API limit to 120 a minute, the sync endpoint was hitting it.", "u"),
        V("Rate limiting is per device now, 90 requests a minute, not per user.", "u", user="maya"),
    ], now=["What's the request throttle on the Atlas API?", "How many calls a minute can a client make to our backend?"],
       prev=[("What was the per-user throttle before it became per device?", 1)], asker="maya"),
    Chain("db-size", [
        V("Prod database is a db.t3.large Postgres on RDS."),
        V("Upgraded prod Postgres to db.r6g.xlarge after the CPU alarms.", "d", "CPU alarms"),
    ], now=["Which instance class does the production database use?"], prev=[("What size was the prod database before the upgrade?", 0)]),
    Chain("cache-ttl", [
        V("Feed responses are cached in Redis for 300 seconds."),
        V("Cut the feed cache TTL to 60 seconds, users complained about stale posts.", "u"),
    ], now=["How long are feed responses kept in the cache?"], prev=[("What was the feed cache lifetime originally?", 0)]),
    Chain("oncall", [
        V("Backend on-call this month is Tom."),
        V("On-call for the backend handed to Yusuf for the rest of the quarter.", "u"),
    ], now=["Who is on call for the Atlas backend?"], asker="maya"),
    Chain("staging-url", [
        V("Staging API is at staging-api.atlasapp.io."),
        V("Staging moved to api.staging.atlas.dev with the new DNS setup.", "u", restate=["staging endpoint is api.staging.atlas.dev now"]),
    ], now=["What's the base URL of the staging backend?"], prev=[("Where was staging before the DNS change?", 0)]),
    Chain("cloud-budget", [
        V("Cloud budget for Atlas is 4,000 dollars a month."),
        V("Finance approved 5,500 a month for AWS from Q2.", "u"),
    ], now=["How much can Atlas spend on cloud each month?"], prev=[("What was the monthly AWS budget before Q2?", 0)]),
    Chain("push-provider", [
        V("Push notifications go through OneSignal."),
        V("We send pushes directly via FCM and APNs now, OneSignal is gone.", "u"),
    ], now=["How are push notifications delivered?"]),
    Chain("backup-retention", [
        V("Database snapshots are kept for 7 days."),
        V("Snapshot retention raised to 30 days for the audit.", "u"),
    ], now=["How long are database backups retained?"]),
    Chain("deploy-method", [
        V("Backend deploys: merge to main, then run the deploy script from my laptop."),
        V("Backend deploys are automatic now: every merge to main goes out through the pipeline after tests.", "d", "automated deploys"),
    ], now=["How does a backend change reach production?"]),
    Chain("api-version", [
        V("Mobile clients call API v2."),
        V("v3 of the API is live; clients from 4.3 on use v3, v2 stays up until September.", "u", user="maya"),
    ], now=["Which API version do current app builds call?"]),
    Chain("log-level", [
        V("Prod log level is INFO."),
        V("Turned prod logging down to WARN, the log bill was absurd.", "u"),
    ], now=["What log level runs in production?"]),
], stable=[
    Stable("region", "Atlas backend runs in AWS eu-west-1.", ["Which AWS region hosts the backend?"]),
    Stable("orm", "Backend is Django 5 with DRF, Celery for background jobs.", ["What is the server stack of Atlas?"]),
    Stable("secrets", "Secrets live in AWS Secrets Manager, never in env files.", ["Where are backend credentials stored?"], kind="lesson",
           restate=["reminder: Secrets Manager for all secrets, nothing in .env"]),
], comps=[
    Comp("rate-limit-login", "Login has its own limit: 5 failed attempts per 10 minutes per account.", "rate-limit", ["How many failed sign-ins are allowed?"]),
    Comp("cache-profile", "Profile responses stay cached for 10 minutes, that's separate from the feed.", "cache-ttl", ["How long are profile responses cached?"]),
], contras=[
    Contra("max-upload", "Max photo upload is 10 MB.", "Photo uploads are capped at 20 MB on the API.", ["What's the maximum photo size users can upload?"], user_b="maya"),
], chat=[
    "pager went off at 3am, not fun", "can you remind me what the staging url is?", "the RDS bill is scary",
    "Yusuf is great, glad he's on call", "deploying now, fingers crossed", "what did we set the cache to?",
    "writing a postmortem today", "tests are flaky again", "lunch then migrations",
])
