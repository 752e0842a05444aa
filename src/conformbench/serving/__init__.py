"""conformbench.serving: what a grammar costs on a serving engine
(``conformbench engines cost``): the same prompts streamed with the grammar
off and on, at several concurrency levels, timed per request (time to first
token, time per output token) and each answer validated against its full
schema."""
