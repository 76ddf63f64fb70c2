"""The response of `GET /v4/lists/{listId}/action-names`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .resources import envelope


class ActionNameOut(BaseModel):
    name: str = Field(description="An action name, as filters write it (`share`).")
    count: int = Field(description="How many of the list's actions carry it.")


class ActionNamesData(BaseModel):
    names: list[ActionNameOut] = Field(
        description="Most frequent first, then by name; empty for a list without actions."
    )


ActionNamesResponse = envelope("ActionNamesResponse", ActionNamesData)
