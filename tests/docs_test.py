"""The user documentation holds: the Python code of README.md and docs/*.md runs, and the
pages' links, commands and markers are what the rest of the repository expects.

Each page's ```python blocks run top to bottom in one namespace, as a reader pastes them,
in a scratch folder whose `saved_models/` holds tiny output folders made here (untrained
models with small tokenizers, no SavedModel: the code paths are checked, not the
translations). A block after a `<!-- skip: REASON -->` line only has to compile (it needs,
say, a trained folder's SavedModel, or trains a model: tests/training and tests/export run
those paths). ```bash blocks are not run.
"""

import ast
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SKIP = re.compile(r"^<!--\s*skip:\s*(?P<reason>.+?)\s*-->$")
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
# The output folders the pages name: (folder, preset); "quickstart" is a copy of the first.
FOLDERS = (
    ("luong_local_general", "luong_local_p_general"),
    ("bahdanau_rnnsearch", "bahdanau_rnnsearch"),
)
MAIN_JOB = 'pip install -e ".[dev]" && python recipes/luong_local_general.py'


def _ci_test_command():
    """The test command .ci/run runs: its last line that is not a comment."""
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")][-1].strip()


def _paper_table_markers():
    """README_START and README_END of bench/paper_table.py (the script that writes the block)."""
    tree = ast.parse((REPO / "bench" / "paper_table.py").read_text(encoding="utf-8"))
    values = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in ("README_START", "README_END")
    }
    return values["README_START"], values["README_END"]


TEST_COMMAND = _ci_test_command()
PAPER_TABLE_START, PAPER_TABLE_END = _paper_table_markers()


def python_blocks(path):
    """[(line, code, skip reason or None)] of the ```python blocks of `path`; `line` is
    the 1-based line of the block's first code line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            previous = next((x.strip() for x in reversed(lines[:i]) if x.strip()), "")
            skip = SKIP.match(previous)
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            assert end < len(lines), f"{path.name}:{i + 1}: a ```python block is never closed"
            blocks.append((i + 2, "\n".join(lines[i + 1 : end]), skip and skip["reason"]))
            i = end
        i += 1
    return blocks


def compiled(path, line, code):
    # Padded so that tracebacks give the line numbers of the page itself.
    return compile("\n" * (line - 1) + code, str(path), "exec")


def runnable(path):
    return [(line, code) for line, code, skip in python_blocks(path) if skip is None]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_python_block_compiles(path):
    for line, code, _ in python_blocks(path):
        compiled(path, line, code)


@pytest.fixture(scope="module")
def docs_folders(data_dir, tmp_path_factory):
    """A scratch folder whose saved_models/ holds the output folders the pages name."""
    import keras
    from translator_toy import VOCAB_SIZE, read_lines

    from zoo.models import build
    from zoo.text import train_tokenizer
    from zoo.translator import Translator

    root = tmp_path_factory.mktemp("docs")
    source = train_tokenizer("sentencepiece", read_lines("train.de"), vocab_size=VOCAB_SIZE)
    target = train_tokenizer("sentencepiece", read_lines("train.en"), vocab_size=VOCAB_SIZE)
    for seed, (folder, preset) in enumerate(FOLDERS):
        keras.utils.set_random_seed(seed)
        model = build(
            preset,
            size="tiny",
            source_vocab_size=source.vocab_size,
            target_vocab_size=target.vocab_size,
        )
        Translator(model, source, target).save(root / "saved_models" / folder, serving=False)
    shutil.copytree(root / "saved_models" / FOLDERS[0][0], root / "saved_models" / "quickstart")
    return root


@pytest.mark.parametrize("path", [p for p in PAGES if runnable(p)], ids=lambda p: p.name)
def test_python_blocks_run(path, docs_folders, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(docs_folders)
    namespace = {"__name__": "__docs__"}
    try:
        for line, code in runnable(path):
            try:
                exec(compiled(path, line, code), namespace)
            except Exception as error:
                raise AssertionError(
                    f"{path.name}: the python block at line {line} failed: "
                    f"{type(error).__name__}: {error}"
                ) from error
    finally:
        plt.close("all")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_relative_links_point_to_files(path):
    text = path.read_text(encoding="utf-8")
    missing = []
    for match in LINK.finditer(text):
        target = match["target"].split("#")[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue  # an anchor on the same page, or a web address
        if not (path.parent / target).exists():
            missing.append(match["target"])
    assert missing == [], f"{path.name} links to files that do not exist: {missing}"


def github_slug(heading):
    """The anchor GitHub gives a heading: punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def mkdocs_slug(heading):
    """The anchor MkDocs' toc gives a heading: punctuation dropped, runs of spaces and
    hyphens one hyphen."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def test_slugs_match_the_two_sites_rules():
    heading = "The papers' optimizers: `--optimizer paper`"
    assert github_slug(heading) == "the-papers-optimizers---optimizer-paper"
    assert mkdocs_slug(heading) == "the-papers-optimizers-optimizer-paper"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_anchors_name_a_heading_on_github_and_in_mkdocs(path):
    text = path.read_text(encoding="utf-8")
    broken = []
    for match in LINK.finditer(text):
        target, _, anchor = match["target"].partition("#")
        page = (path.parent / target) if target else path
        if not anchor or re.match(r"^[a-z]+:", target) or page.suffix != ".md":
            continue
        headings = re.findall(r"^#+ (.*)$", page.read_text(encoding="utf-8"), re.M)
        slugs = {github_slug(h) for h in headings} & {mkdocs_slug(h) for h in headings}
        if anchor not in slugs:
            broken.append(match["target"])
    assert broken == [], f"{path.name}: anchors that are no heading on both sites: {broken}"


def test_readme_gives_the_two_commands_exactly():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"\n    {MAIN_JOB}\n" in text
    assert f"\n    {TEST_COMMAND}\n" in text  # what CI runs, character for character


def test_readme_stays_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 220, f"README.md has {len(lines)} lines; the guides in docs/ hold the rest"


def test_papers_page_holds_one_paper_table_block():
    text = (REPO / "docs" / "papers.md").read_text(encoding="utf-8")
    assert text.count(PAPER_TABLE_START) == 1 and text.count(PAPER_TABLE_END) == 1
    block = text[text.index(PAPER_TABLE_START) : text.index(PAPER_TABLE_END)]
    assert "| row | paper row |" in block
    assert "](paper_table_bleu_by_length.png)" in block


def test_site_navigation_lists_every_page():
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = re.findall(r"^\s*- [^:]+: (\S+\.md)\s*$", text, flags=re.MULTILINE)
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    assert sorted(listed) == pages
    assert listed[0] == "index.md"


@pytest.mark.parametrize(
    "path",
    [*PAGES, REPO / "CHANGELOG.md", REPO / "CONTRIBUTING.md", REPO / "saved_models" / "README.md"],
    ids=lambda p: p.name,
)
def test_pages_speak_of_the_software(path):
    text = path.read_text(encoding="utf-8")
    history = re.findall(r"[Ss]essions? [0-9]+|[Ii]ssues? [0-9]+", text)
    assert history == [], f"{path.name} names development history: {history}"


def test_decoding_guide_states_the_library_search_defaults():
    from zoo.search import defaults

    text = (REPO / "docs" / "decoding.md").read_text(encoding="utf-8")
    stated = dict(re.findall(r"^\| (`[a-z_`, ]+`) \| ([^|]+?) \|", text, flags=re.MULTILINE))
    for names, values in stated.items():
        names = re.findall(r"`(\w+)`", names)
        values = [float(v) for v in values.split(",")]
        assert values == [float(defaults.SEARCH_DEFAULTS[n]) for n in names], names
    assert sorted(n for key in stated for n in re.findall(r"`(\w+)`", key)) == sorted(
        defaults.SEARCH_DEFAULTS
    )


def test_training_guide_states_the_library_training_profiles():
    from zoo.training import settings as profiles

    text = (REPO / "docs" / "training.md").read_text(encoding="utf-8")
    for family in profiles.FAMILIES:
        row = re.search(rf"^\| {family.capitalize()} recipes \|(.+)$", text, re.MULTILINE)
        assert row, f"training.md has no table row for the {family} recipes"
        default, paper = row[1].split("|")[:2]
        for cell, profile in (
            (default, profiles.training_profile(family)),
            (paper, profiles.training_profile(family, paper=True)),
        ):
            assert f"batches of {profile['batch_size']}," in cell, (family, cell)
            assert f"{profile['epochs']} epochs" in cell, (family, cell)
            if profile["decay_after"] is not None:
                assert f"after epoch {profile['decay_after']}," in cell, (family, cell)
            limit = profile["max_minutes"]
            assert (f"at most {limit:g} minutes" if limit else "no time limit") in cell


def _size_tables(text):
    """The rows of training.md's Sizes tables, a list per table: (label, [tiny, base, paper])."""
    section = text.split("\n## Sizes\n", 1)[1].split("\n## ", 1)[0]
    tables = re.split(r"\n\n(?=\| argument \|)", section)[1:]
    row = re.compile(r"^\| (`\w+`[^|]*) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", re.MULTILINE)
    return [[(m[1], [m[2], m[3], m[4]]) for m in row.finditer(table)] for table in tables]


def _stated(cell):
    """A table cell's value: yes/no as booleans, numbers as floats."""
    cell = cell.strip()
    return {"yes": True, "no": False}[cell] if cell in ("yes", "no") else float(cell)


def test_training_guide_states_the_preset_sizes():
    """Every value of the Sizes tables is the preset's, and every preset argument but the
    attention, score and tying (a recipe's own choices) is in them."""
    from zoo.models import attention_presets, preset_arguments, presets

    text = (REPO / "docs" / "training.md").read_text(encoding="utf-8")
    bahdanau, luong = _size_tables(text)
    families = (
        (bahdanau, [p for p in presets() if p.startswith("bahdanau")]),
        (luong, [p for p in attention_presets() if p.startswith("luong")]),
    )
    for rows, names in families:
        stated = {}
        for label, cells in rows:
            argument = re.match(r"`(\w+)`", label)[1]
            for name in names:
                if "RNN" in label and name.split("_")[1] not in label.lower():
                    continue  # a row of the other Bahdanau preset
                for size, cell in zip(("tiny", "base", "paper"), cells, strict=True):
                    value = preset_arguments(name, size)[argument]
                    stated_value = _stated(cell)
                    assert stated_value == value, (label, name, size, cell, value)
                    assert isinstance(stated_value, bool) == isinstance(value, bool), label
                    stated.setdefault(name, set()).add(argument)
        for name in names:
            own = set(preset_arguments(name)) - {"attention", "score", "tie_embeddings"}
            assert stated[name] == own, name


NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
# "`--flag` (50", "`--flag N` (default 3", "`--flag` pairs (100,000", "`--flag` (60 by default"
FLAG_DEFAULT = re.compile(
    rf"`(--[a-z0-9-]+)(?: [A-Z_]+)?`(?: [a-z]+)? \((?:default:? )?({NUMBER})"
    r"(?: [a-z]+)?(?: by default)?[,;)]"
)


def _number(text):
    return float(text.replace(",", ""))


def _command_line_parsers():
    """The parsers of the recipes (both families), recipes/tune.py and `python -m zoo`'s
    commands."""
    import argparse
    import importlib.util

    from zoo.cli.parser import build_parser
    from zoo.workflow.arguments import make_parser

    spec = importlib.util.spec_from_file_location("tune_recipe", REPO / "recipes" / "tune.py")
    tune = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tune)
    parsers = [
        make_parser("luong_local_general", "luong"),
        make_parser("bahdanau_rnnsearch", "bahdanau"),
        tune.parser(),
    ]
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers.extend(action.choices.values())
    return parsers


def _flag_defaults():
    """{flag: the numbers its --help gives as its default}: the parser's default, and the
    numbers after "default" in the help text (a default the library renders there)."""
    found = {}
    for parser in _command_line_parsers():
        for action in parser._actions:
            help_text = (action.help or "") % dict(vars(action), prog=parser.prog)
            for flag in action.option_strings:
                numbers = found.setdefault(flag, set())
                if type(action.default) in (int, float):
                    numbers.add(float(action.default))
                stated = re.findall(rf"default:? ({NUMBER})", help_text, flags=re.IGNORECASE)
                numbers.update(_number(value) for value in stated)
    return found


def test_a_flags_default_in_the_guides_is_the_one_its_help_gives():
    defaults = _flag_defaults()
    claims = [
        (path.name, flag, value)
        for path in PAGES
        for flag, value in FLAG_DEFAULT.findall(" ".join(path.read_text("utf-8").split()))
    ]
    assert len(claims) >= 10, claims  # the pattern still finds the guides' defaults
    wrong = [claim for claim in claims if _number(claim[2]) not in defaults.get(claim[1], ())]
    assert wrong == [], f"(page, flag, stated default) not in the flag's --help: {wrong}"


def _expand_braces(word):
    """`luong_local_{m,p}_{dot,general}` -> its four names."""
    match = re.search(r"\{([^}]+)\}", word)
    if match is None:
        return [word]
    return [
        name
        for part in match[1].split(",")
        for name in _expand_braces(word[: match.start()] + part + word[match.end() :])
    ]


def test_tuning_guide_states_the_search_space():
    """The guide's table of the search space: its names, choices and ranges are the ones
    `zoo.tuning.space.declare` gives keras-tuner."""
    import keras_tuner

    from zoo.tuning import space

    hp = keras_tuner.HyperParameters()
    space.declare(hp, "base")
    declared = {h.name: h for h in hp.space}
    text = (REPO / "docs" / "tuning.md").read_text(encoding="utf-8")
    section = text.split("\n## The search space\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (`[^|]+`) \| ([^|]+) \| ([^|]+) \|$", section, re.MULTILINE)
    stated = {
        name: (values, active)
        for names, values, active in rows
        for name in re.findall(r"`(\w+)`", names)
    }
    assert set(stated) == set(declared)
    for name, (values, active) in stated.items():
        _, parent, parent_values = space.DIMENSIONS[name]
        assert (active.strip() == "always") == (parent is None), name
        if active.startswith("optimizer "):
            assert [active.split()[1]] == list(parent_values), name
        h = declared[name]
        numbers = [float(n) for n in re.findall(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\b", values)]
        if type(h).__name__ == "Float":
            expected = [h.min_value, h.max_value] + ([h.step] if h.step else [])
            assert numbers == expected, name
            assert ("log scale" in values) == (h.sampling == "log"), name
        elif name in ("attention", "optimizer"):
            words = [
                w for word in re.findall(r"`([\w{},]+)`", values) for w in _expand_braces(word)
            ]
            assert sorted(words) == sorted(h.values), name
        elif name == "window":
            assert numbers == list(h.values), name


def _package_constants():
    """{NAME: value} of the numbers zoo's modules assign to upper-case names."""
    import ast

    constants = {}
    for path in (REPO / "zoo").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id.isupper():
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        continue
                    if type(value) in (int, float):
                        constants.setdefault(target.id, set()).add(float(value))
    return constants


def test_a_constant_named_in_the_guides_has_the_value_they_give():
    """ "`MAX_BEAM_SIZE` (1024)" and "at most 16 and 1024 (`A`, `B` of ...)" state the
    constants' values."""
    constants = _package_constants()
    claims = []
    for path in PAGES:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for name, value in re.findall(rf"`([A-Z][A-Z0-9_]+)` \(({NUMBER})\)", text):
            claims.append((path.name, name, value))
        for values, names in re.findall(
            rf"({NUMBER}(?:(?:,| and) {NUMBER})*) \((`[A-Z][A-Z0-9_]+`(?:, `[A-Z][A-Z0-9_]+`)*)",
            text,
        ):
            values = re.split(r",? and |, ", values)
            names = re.findall(r"`(\w+)`", names)
            assert len(values) == len(names), (path.name, values, names)
            claims.extend((path.name, n, v) for n, v in zip(names, values, strict=True))
    assert len(claims) >= 3, claims
    wrong = [c for c in claims if _number(c[2]) not in constants.get(c[1], ())]
    assert wrong == [], f"(page, constant, stated value) that are not the constant's: {wrong}"


def _results_module():
    """bench/results.py, the record of measured results and the README table it renders."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_results", REPO / "bench" / "results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _figure_pattern(value):
    """A regex finding `value` as a figure of its own: 39.98 but not 139.98 or 39.981."""
    texts = {str(value)}
    if isinstance(value, float):
        texts |= {f"{value:.2f}", f"{value:,.2f}", f"{value:g}"}
    elif isinstance(value, int):
        texts |= {f"{value:,}"}
    alternatives = "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
    return re.compile(rf"(?<![\w.,])(?:{alternatives})(?![\w]|[.,]\d)")


def test_results_record_is_complete_and_points_to_its_history():
    results = _results_module()
    entries = results.load()
    assert len(entries) >= 10
    headings = re.findall(r"^#+ (.*)$", (REPO / "bench" / "RESULTS.md").read_text("utf-8"), re.M)
    slugs = {github_slug(h) for h in headings}
    for entry in entries:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry["date"]), entry["id"]
        page, _, anchor = entry["history"].partition("#")
        assert page == "bench/RESULTS.md", entry["id"]
        assert re.sub(r"-\d+$", "", anchor) in slugs or anchor in slugs, entry["id"]
        for name, old in entry.get("superseded", {}).items():
            assert name in entry["values"] and entry["values"][name] not in old, entry["id"]


def test_readme_results_table_is_the_records():
    results = _results_module()
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert results.render(text, results.load()) == text, "run python bench/results.py"


def test_pages_quote_the_records_current_figures():
    """Each quote of the record, with the current values filled in, is on its page: a
    figure changed in the record and not on the page (or the reverse) fails here."""
    results = _results_module()
    missing = [
        (quote["page"], entry["id"], text)
        for entry in results.load()
        for quote in entry.get("quotes", ())
        if (text := " ".join(results.fill(quote["text"], entry).split()))
        not in " ".join((REPO / quote["page"]).read_text(encoding="utf-8").split())
    ]
    assert missing == [], f"(page, entry, text) the pages do not hold: {missing}"


def test_pages_show_no_superseded_figure():
    """A value the record lists as replaced appears on no page (README.md, docs/*.md) outside
    a quote of the record: the pages quote the current figure of each fact."""
    results = _results_module()
    entries = results.load()
    found = []
    for path in PAGES:
        text = " ".join(path.read_text(encoding="utf-8").split())
        page = path.relative_to(REPO).as_posix()
        for entry in entries:
            for quote in entry.get("quotes", ()):
                if quote["page"] == page:
                    text = text.replace(" ".join(results.fill(quote["text"], entry).split()), " ")
        for entry in entries:
            for name, old in entry.get("superseded", {}).items():
                for value in old:
                    if _figure_pattern(value).search(text):
                        found.append((page, entry["id"], name, value))
    assert found == [], f"(page, entry, figure, superseded value) still shown: {found}"


def test_record_agrees_with_the_paper_tables_records():
    import json

    results = _results_module()
    for entry in results.load():
        row = entry.get("paper_table_row")
        if row is None:
            continue
        record = json.loads(
            (REPO / "bench" / "paper_table" / "12_epochs" / f"{row}.json").read_text("utf-8")
        )
        values = entry["values"]
        assert values["bleu_beam"] == round(record["bleu"], 2), entry["id"]
        assert values["bleu_greedy"] == round(record["bleu_greedy"], 2), entry["id"]
        assert values["chrf_beam"] == round(record["chrf"], 2), entry["id"]


def test_tuning_guide_states_the_search_defaults():
    """ "`--max-trials` (10)", "`--tuner` (random)": the defaults of zoo.tuning.tune, which
    recipes/tune.py renders."""
    import inspect

    from zoo import tuning

    text = " ".join((REPO / "docs" / "tuning.md").read_text(encoding="utf-8").split())
    defaults = inspect.signature(tuning.tune).parameters
    for name in ("tuner", "objective", "max_trials", "epochs", "data", "size", "directory"):
        flag = "--" + name.replace("_", "-")
        assert f"`{flag}` ({defaults[name].default})" in text, flag


def test_site_builds_strictly_with_the_api_reference(tmp_path):
    """`mkdocs build --strict`: every page of the navigation, and the API reference that
    mkdocstrings renders from the docstrings (docs/api.md), with no warning."""
    import subprocess
    import sys

    wanted = ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python")
    missing = [module for module in wanted if not _found(module)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}: pip install -e '.[docs]'")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    api = (tmp_path / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="zoo.translator.Translator"' in api and 'id="zoo.search.search"' in api


def _found(module):
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
