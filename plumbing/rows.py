"""Written-out SQL for model instances, on the hot paths where compiling a queryset cost more than running it: the
caller's token on every request (1.2 ms a load through the ORM, 0.36 ms written out), recall's hits, remember's rows.

A query selects ``select_list`` of each model it reads, in order; ``take`` then makes each instance from its part of
the row, converting values as the ORM does (JSON, for one). ``insert`` writes instances as ``Model.save`` would.
"""
from django.db import connection
from django.db.models import Field, Model


def fields(model: type[Model], *, without: tuple[str, ...] = ()) -> list[Field]:
    """The model's columns, less ``without`` (attribute names), which the instances then load only when read."""
    return [field for field in model._meta.concrete_fields if field.attname not in without]


def select_list(alias: str, columns: list[Field]) -> str:
    return ", ".join(f"{alias}.{connection.ops.quote_name(field.column)}" for field in columns)


def take(values: list, model: type[Model], columns: list[Field]) -> Model | None:
    """The instance made of the first ``len(columns)`` of ``values``, which are removed; None when its primary key is
    NULL (an outer join that found no row, or a row that row-level security hides)."""
    taken, values[:len(columns)] = values[:len(columns)], []
    if taken[columns.index(model._meta.pk)] is None:
        return None
    converted = [field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value
                 for field, value in zip(columns, taken, strict=True)]
    return model.from_db(connection.alias, [field.attname for field in columns], converted)


def attach(instance: Model, **related: Model | None) -> None:
    """Give ``instance`` its related objects as select_related would, without touching the foreign keys: a related
    row that RLS hides leaves its id in place and reads as None."""
    for name, value in related.items():
        instance._meta.get_field(name).set_cached_value(instance, value)


def insert(instances: list[Model]) -> tuple[str, list]:
    """The INSERT of ``instances`` (of one model; an auto-increment id left to the database, and returned), with
    each value prepared as the ORM prepares it. The caller runs it, alone or with more in one statement."""
    model = type(instances[0])
    columns = [field for field in model._meta.local_concrete_fields
               if not (field.primary_key and getattr(instances[0], field.attname) is None)]
    params = [field.get_db_prep_save(field.pre_save(instance, add=True), connection)
              for instance in instances for field in columns]
    row = f"({', '.join(['%s'] * len(columns))})"
    left_out = len(columns) < len(model._meta.local_concrete_fields)
    returning = f" RETURNING {connection.ops.quote_name(model._meta.pk.column)}" if left_out else ""
    names = ", ".join(connection.ops.quote_name(field.column) for field in columns)
    return (f"INSERT INTO {model._meta.db_table} ({names}) VALUES {', '.join([row] * len(instances))}{returning}",
            params)


def saved(instance: Model) -> Model:
    """Mark an instance written by ``insert`` as the ORM marks what it saved."""
    instance._state.adding, instance._state.db = False, connection.alias
    return instance
