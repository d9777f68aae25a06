"""The TUI's forms: the questions of an ask-user form (one widget per question kind)
and the review of a scheduled-prompt proposal.

Textual widgets and screens; they read the core's request shapes and return the
answers the core expects, and import nothing of the app or the chat.
"""
