"""An explicit name → object registry whose lookup error lists the valid names."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from stages.core.errors import ParamsError, PipelineError

T = TypeVar("T")


class UnknownNameError(PipelineError, KeyError):
    """Lookup of a name that is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Generic[T]):
    """Holds named entries of one family (selectors, datasets, papers, ...)."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register an entry under `name` (names are unique)."""

        def decorate(entry: T) -> T:
            self.add(name, entry)
            return entry

        return decorate

    def add(self, name: str, entry: T) -> None:
        """Register `entry` under `name`."""
        if name in self._entries:
            raise ValueError(f"{self.family} '{name}' is already registered")
        self._entries[name] = entry

    def get(self, name: str) -> T:
        """The entry registered as `name`; an unknown name lists the valid ones."""
        try:
            return self._entries[name]
        except KeyError:
            valid = ", ".join(sorted(self._entries)) or "(none)"
            raise UnknownNameError(f"unknown {self.family} '{name}'; valid names: {valid}") from None

    def build(self, name: str, options: Mapping[str, Any] | None = None, key: str = "options") -> Any:
        """An instance of the registered class `name`, its `Options` model validated from `options`.

        An unknown name lists the valid ones; an unknown or ill-typed option is an error naming `key.option`.
        """
        from stages.core.params import describe_options, validate_section

        entry = self.get(name)
        try:
            parsed = validate_section(
                entry.Options, dict(options or {}), key, source=f"{self.family} '{name}'"
            )
        except ParamsError as error:
            valid = describe_options(entry.Options)
            listing = (
                "\n".join(f"    {line}" for line in valid) if valid else "    (none: it takes no options)"
            )
            raise ParamsError(f"{error}\n  valid options of {self.family} '{name}':\n{listing}") from None
        return entry(parsed)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
