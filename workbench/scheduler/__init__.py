"""Scheduled prompts: schedule shapes and their arithmetic in local time, the run card.

Owns when a schedule is due (five shapes and cron, across daylight-saving changes,
a monthly or yearly day clamped to a month's end), what a missed window comes to
(``runMissed``), and the run card that freezes what a run may use. Pure logic: it
imports the leaves and the settings' declared defaults (``workbench.config.settings``)
alone, never the core, the supervisor, the config files or any front-end, and it never
runs anything.
"""
