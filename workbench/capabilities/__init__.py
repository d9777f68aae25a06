"""What a tool reaches through the host rather than the sandbox: its private database,
the model, speech, and schedule proposals. Imports the store, config and leaves; never
the core or a front-end (the core passes in what these need).
"""
