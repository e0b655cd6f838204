"""Translator.export and Translator.export_litert take the arguments of the functions they
call (zoo.export), with the same defaults: the library's signature is the one source."""

import inspect

import pytest

from zoo import export
from zoo.translator import Translator


@pytest.mark.parametrize(
    ("method", "function"),
    [
        (Translator.export, export.export_translator),
        (Translator.export_litert, export.export_litert),
    ],
)
def test_the_methods_take_the_export_functions_arguments_and_defaults(method, function):
    def arguments(f, first):
        parameters = list(inspect.signature(f).parameters.values())
        assert parameters[0].name == first
        return [(p.name, p.default) for p in parameters[1:]]

    assert arguments(method, "self") == arguments(function, "translator")
