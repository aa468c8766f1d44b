"""Input fields that take the JSON type the contract names and nothing that merely converts to it.

DRF's CharField turns 5 into "5" (and SlugField accepts it as a slug), IntegerField takes "5" and 5.0, BooleanField
takes "yes" and 1: a client that sends the wrong type gets a 400 naming the field, not a silently converted value.
"""
from rest_framework import serializers


class _StringOnly:
    default_error_messages = {"not_a_string": "Not a valid string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictCharField(_StringOnly, serializers.CharField):
    pass


class StrictSlugField(_StringOnly, serializers.SlugField):
    pass


class StrictEmailField(_StringOnly, serializers.EmailField):
    pass


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data
