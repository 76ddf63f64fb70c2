"""The response of `GET /v4/lists/{listId}/fields`: the fields a list's filters may name."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .... import FieldType
from .resources import envelope


class FilterField(BaseModel):
    key: str = Field(description="The field as filters name it (`points`, `createdAt`).")
    type: FieldType = Field(
        description="The library's field type: `string`, `number`, `boolean`, `datetime`, "
        "`date`, `json` (compared through a path) or a list type such as `string[]`."
    )
    label: str = Field(description="A readable name to show (`Points`, `Signed up at`).")
    custom: bool = Field(
        description="`true` for a custom field of this list (kept in the contact's `data`), "
        "`false` for a field of every list."
    )
    operators: list[str] = Field(
        description="The operators filters take for this field, as the where clause spells "
        "them (`equals`, `gte`, `has`, `isEmpty`, `blank`...), computed by the library: a "
        "builder offers these and no others. The null tests (`null`, `not: null`) apply to "
        "every field and `not` negates any operator, so neither is listed. A list kept "
        "inside `data` takes `has`, `hasSome` and `hasEvery` only."
    )
    insensitive: bool = Field(
        description='Whether `mode: "insensitive"` (ignoring case) applies to this field.'
    )


class FilterAggregate(BaseModel):
    function: str = Field(description="`count`, `sum`, `min` or `max`.")
    fields: list[FilterField] = Field(
        description="What the aggregate may be of, each with the operators its test takes: "
        "`count` has one entry, `count` (a number); `sum` each number field of the rows; "
        "`min` and `max` each number and date-time field (`increase`, `createdAt`)."
    )


class FilterRelation(BaseModel):
    key: str = Field(description="The relation as filters name it: `actions` or `audiences`.")
    label: str = Field(description="A readable name to show.")
    fields: list[FilterField] = Field(description="The fields of a related row.")
    aggregates: list[FilterAggregate] = Field(
        description="The aggregates over the rows (`actions: {count: {gte: 3}}`, "
        '`actions: {max: {createdAt: {gte: {"ago": "P30D"}}}}`); none for a to-one relation.'
    )


class ListFieldsData(BaseModel):
    fields: list[FilterField] = Field(description="Every field of a contact filters may name.")
    relations: list[FilterRelation] = Field(
        description="The contact's related rows filters may read (`some`, `none`, `count`...)."
    )
    timeZones: list[str] = Field(
        description="Every IANA time zone name a calendar value's `timeZone` may take "
        "(`Europe/Paris`, `America/New_York`), sorted: what a zone picker offers."
    )
    defaultTimeZone: str = Field(
        description="The zone a calendar value naming none is read in (`within this month`)."
    )


ListFieldsResponse = envelope("ListFieldsResponse", ListFieldsData)


class SignUpInput(BaseModel):
    key: str = Field(
        description="The name the value is sent under in `POST /v4/contacts`: `email`, a "
        "profile field (`firstName`), or `data.<key>` for a key of `data` (`data.birthday`: "
        'sent as `{"data": {"birthday": ...}}`).'
    )
    label: str = Field(description="A readable name to show (a custom field's own label).")
    type: str = Field(
        description="The type its input takes: a custom field's declared type (`date`, "
        "`number`, `boolean`, `string[]`...), `string` otherwise."
    )
    required: bool = Field(description="`true` for `email` alone.")


class SignUpFormData(BaseModel):
    listId: str = Field(description="The list the form signs contacts up to.")
    fields: list[SignUpInput] = Field(
        description="`email`, then each field the list's `publicFields` opens, in its order."
    )
    allData: bool = Field(
        description="`true` when `publicFields` opens every key of `data` (`data`): a form "
        "may then send keys it names itself."
    )


SignUpFormResponse = envelope("SignUpFormResponse", SignUpFormData)
