"""Every recipe builds what its preset builds.

The recipes build their models in the open (each shows a paper row's architecture); the
paper table, the tuner and the tests build the presets (`zoo.models.build`). Here every
recipe's `build_model(args, source_vocab_size, target_vocab_size)`, with `args` from the
recipe's own command line, is compared with `zoo.models.build(preset, size, ...)` at every
size and for every value of every model flag the recipe offers: the layers' configs, the
weights' names and shapes, and the parameter count must be equal.

At --size base and paper the models are built inside `keras.StatelessScope`: their weights
get shapes but no values (drawing the paper size's 70M weights would take seconds a model).
"""

import runpy
from pathlib import Path

import keras
import pytest

import zoo.workflow
from zoo.models import SIZES, build
from zoo.workflow.flags import recipe_family

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "recipes"
SOURCE_VOCAB, TARGET_VOCAB = 50, 60  # different, so that a swapped pair shows

# The preset each recipe stands for, given its parsed arguments.
PRESET_OF = {
    "bahdanau_rnnencdec": lambda args: "bahdanau_rnnencdec",
    "bahdanau_rnnsearch": lambda args: "bahdanau_rnnsearch",
    "luong_base": lambda args: "luong_base",
    "luong_global_dot": lambda args: "luong_global_dot",
    "luong_global_general": lambda args: "luong_global_general",
    "luong_global_concat": lambda args: "luong_global_concat",
    "luong_global_location": lambda args: "luong_global_location",
    "luong_local_dot": lambda args: f"luong_local_{args.mode[0]}_dot",  # p(redictive), m(onotonic)
    "luong_local_general": lambda args: f"luong_local_{args.mode[0]}_general",
}
# The values tried for each architecture switch a recipe offers (the default is tried too).
SWITCH_VALUES = {
    "dropout": (["--dropout", "0"], ["--dropout", "0.25"]),
    "reverse_source": (["--reverse-source"], ["--no-reverse-source"]),
    "bidirectional": (["--bidirectional"], ["--no-bidirectional"]),
    "input_feeding": (["--input-feeding"], ["--no-input-feeding"]),
    "window": (["--window", "3"],),
}


def recipe_main_arguments(name, monkeypatch):
    """What recipes/<name>.py passes to `zoo.workflow.main` when run, and its build_model."""
    calls = []
    monkeypatch.setattr(zoo.workflow, "main", lambda *args, **kwargs: calls.append((args, kwargs)))
    runpy.run_path(str(RECIPES / f"{name}.py"), run_name="__main__")
    assert len(calls) == 1, f"{name} calls zoo.workflow.main {len(calls)} times"
    (build_model,), kwargs = calls[0]
    return build_model, kwargs


def recipe_parser(kwargs, switches=None):
    """The recipe's parser, as `zoo.workflow.main` makes it from the recipe's arguments."""
    switches = kwargs.get("switches") if switches is None else switches
    parser = zoo.workflow.make_parser(
        kwargs["recipe"],
        kwargs.get("family") or recipe_family(kwargs["recipe"]),  # main's default
        description=kwargs.get("description"),
        switches=switches,
    )
    if kwargs.get("add_arguments") is not None:
        kwargs["add_arguments"](parser)
    return parser


def model_flags(kwargs):
    """{dest: (argv, ...)}: the values to try of every flag the recipe's parser has beyond
    the shared ones (its architecture switches and its own flags, such as --mode)."""
    shared = {action.dest for action in recipe_parser(kwargs, switches=())._actions}
    flags = {}
    for action in recipe_parser(kwargs)._actions:
        if action.dest in shared:
            continue
        if action.dest in SWITCH_VALUES:
            flags[action.dest] = SWITCH_VALUES[action.dest]
        elif action.choices:
            option = action.option_strings[0]
            flags[action.dest] = tuple(
                [option, choice] for choice in action.choices if choice != action.default
            )
        else:
            raise AssertionError(f"no test values for {action.option_strings}: add them here")
    return flags


def flag_combinations(flags):
    """The defaults, each value of each flag alone, and all flags at their first and at their
    last value together."""
    yield []
    for values in flags.values():
        yield from values
    if len(flags) > 1:
        yield [word for values in flags.values() for word in values[0]]
        yield [word for values in flags.values() for word in values[-1]]


def built(size, make, *arguments, **keywords):
    """make(*arguments, **keywords), with weights of shapes but no values above tiny."""
    if size == "tiny":
        return make(*arguments, **keywords)
    with keras.StatelessScope(initialize_variables=False):
        return make(*arguments, **keywords)


def overrides(args):
    """The preset arguments the command line sets: every switch given (not None)."""
    return {
        name: getattr(args, name)
        for name in zoo.workflow.ARCHITECTURE_SWITCHES
        if getattr(args, name, None) is not None
    }


def assert_same_model(got, expected, where):
    got_layers = {layer.name: layer for layer in got.layers}
    expected_layers = {layer.name: layer for layer in expected.layers}
    assert sorted(got_layers) == sorted(expected_layers), where
    for name, layer in expected_layers.items():
        assert type(got_layers[name]) is type(layer), (where, name)
        assert got_layers[name].get_config() == layer.get_config(), (where, name)
    weights = [(w.path, tuple(w.shape), w.dtype) for w in got.weights]
    assert weights == [(w.path, tuple(w.shape), w.dtype) for w in expected.weights], where
    assert got.count_params() == expected.count_params(), where
    assert got.get_config() == expected.get_config(), where


def test_every_recipe_has_a_preset():
    workflows = [p.stem for p in RECIPES.glob("*.py") if "zoo.workflow.main(" in p.read_text()]
    assert sorted(workflows) == sorted(PRESET_OF)


@pytest.mark.parametrize("name", sorted(PRESET_OF))
def test_recipe_builds_its_preset(name, monkeypatch):
    build_model, kwargs = recipe_main_arguments(name, monkeypatch)
    parser = recipe_parser(kwargs)
    flags = model_flags(kwargs)
    tried = 0
    for size in SIZES:
        for words in flag_combinations(flags):
            argv = ["--size", size, *words]
            args = parser.parse_args(argv)
            preset = PRESET_OF[name](args)
            where = f"python recipes/{name}.py {' '.join(argv)} against preset {preset!r}"
            vocabularies = (SOURCE_VOCAB, TARGET_VOCAB)
            try:
                expected = built(size, build, preset, size, *vocabularies, **overrides(args))
            except ValueError:  # a combination the model refuses: the recipe refuses it too
                with pytest.raises(ValueError):
                    built(size, build_model, args, *vocabularies)
                continue
            got = built(size, build_model, args, *vocabularies)
            assert got.name == preset, where
            assert_same_model(got, expected, where)
            tried += 1
        keras.backend.clear_session()
    assert tried >= len(SIZES)  # at least the defaults built at every size
