"""What goes on the wire around GraphQL: the request body Linear's clients POST."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class GraphQLRequest(BaseModel):
    """``{"query", "variables", "operationName"}`` as JSON, the only form Linear takes."""

    model_config = ConfigDict(populate_by_name=True)

    query: str = Field(min_length=1)
    variables: dict[str, Any] | None = None
    operation_name: str | None = Field(default=None, alias="operationName")
