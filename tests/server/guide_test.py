"""The serving guide and `zoo serve --help` state the server's limits as the code has them."""

from pathlib import Path

import pytest

from zoo import cli
from zoo.server import ServerLimits
from zoo.server.limits import limits_table

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "serving.md"


def test_the_serving_guide_holds_the_limits_table_of_the_code():
    assert limits_table() in GUIDE.read_text(encoding="utf-8")


def test_every_limit_is_a_flag_whose_default_is_the_library_default(capsys):
    args = cli.build_parser().parse_args(["serve", "folder"])
    limits = ServerLimits()
    for name, default in limits.as_dict().items():
        assert getattr(args, name) == default, name
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name in limits.as_dict():
        assert "--" + name.replace("_", "-") in help_text
    assert "(default: 1048576)" in help_text and "(default: 127.0.0.1)" in help_text
