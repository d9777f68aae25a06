"""What a tool may reach: its declared requirements, path templates, grants and the broker.

Reaches the store only through its methods; never imports the core or a front-end.
"""
