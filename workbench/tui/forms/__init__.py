"""The TUI's forms: the questions of an ask-user form (one widget per question kind),
the form of a scheduled prompt (a tool's proposal, or a person's own from the Tasks
screen), and ``FormScreen``, the Save and Cancel of the forms that save.

Textual widgets and screens; they read the core's request shapes and return the
answers the core expects, and import nothing of the app or the chat.
"""
