"""The Web add-on's code: ``providers`` (the search services and their order),
``readable`` (the text of a fetched page or PDF) and ``secrets`` (keys kept out of
every answer)."""
