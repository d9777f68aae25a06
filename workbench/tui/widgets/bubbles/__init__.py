"""The display bubbles a tool pushes with ``ctx.display`` (markdown, image, table, diff)
and the widgets they are drawn with, which the ask-user forms share.

Textual widgets only; nothing here reaches the core.
"""
