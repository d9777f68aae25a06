"""The default model: what a chat that keeps no model of its own talks to.

``DefaultModel`` is reached as ``host.default_model``; it is the one owner of the host's
model spec (the ``model`` setting, unless ``--model`` chose one), of whether it was
chosen, and of the model built from it on first use. ``Chats`` and ``ChatModels`` ask it.
It must not import a front-end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.providers import reads_files

if TYPE_CHECKING:
    from workbench.agent.providers import ModelProvider
    from workbench.core.providers import Providers


class DefaultModel:
    """The host's model; see the module docstring.

    Args:
        spec: The model spec (``auto``, ``openai:…``, ``ext:EXTENSION/NAME``…).
        chosen: Whether ``spec`` was chosen for this host (``--model``) rather than
            read from the ``model`` setting: the chats it starts then keep it as their own.
        providers: Builds the model a spec names.
        provider: The model already built for ``spec``, for a caller that brings its own.
    """

    def __init__(self, *, spec: str, chosen: bool, providers: Providers,
                 provider: ModelProvider | None = None) -> None:
        self.spec = spec
        self.chosen = chosen
        """Whether ``spec`` was chosen for this host (``--model``): a new chat keeps it."""
        self.providers = providers
        self.built: ModelProvider | None = provider
        """The model built from ``spec``, once ``provider`` built it (or the one given)."""

    def provider(self) -> ModelProvider:
        """The model ``spec`` names, built on first use (an extension's model provider
        too: ``ext:EXTENSION/NAME``)."""
        if self.built is None:
            self.built = self.providers.build(self.spec)
        return self.built

    @property
    def label(self) -> str:
        """What the person is chatting with: the provider's name once it is built
        (``auto`` resolves to a real one), else the spec."""
        if self.spec == "auto" and self.built is not None:
            return getattr(self.built, "name", None) or self.spec
        return self.spec

    @property
    def notice(self) -> str | None:
        """What the built model has to say of itself (e.g. that replies are echoes)."""
        return getattr(self.built, "notice", None) or None

    def follow_folder(self) -> None:
        """The host moved: a model that reads files (a relative ``scripted:`` path) is
        built again, from the new folder, at its next use."""
        if reads_files(self.spec):
            self.close()

    def close(self) -> None:
        """Close the model built, if it holds anything (a local server), and forget it."""
        closer = getattr(self.built, "close", None)
        if callable(closer):
            closer()
        self.built = None
