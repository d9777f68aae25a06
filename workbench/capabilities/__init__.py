"""What a tool reaches through the host rather than the sandbox: its private database,
the model, speech, and schedule proposals. Imports the manifest's front matter, the
sandbox's path opening, the scheduler's shapes and the leaves; never the store, the
config, the core or a front-end (the core passes in what these need).
"""
