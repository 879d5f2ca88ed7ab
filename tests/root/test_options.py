"""The one table of knobs: every FixLoop setting reaches fix(), `%%fixloop` and `jupyter-fixloop run`
under its own name, with the same default."""

import inspect

import pytest
from IPython.core.magic_arguments import parse_argstring

from jupyter_fixloop.batch.cli import build_parser
from jupyter_fixloop.config import NOT_FLAGS, FixLoop, with_flags
from jupyter_fixloop.loop import fix
from jupyter_fixloop.notebook.magic import FixLoopMagics
from jupyter_fixloop.options import DEFAULTS

SETTINGS = sorted(FixLoop.class_traits(config=True))


def magic(line: str):
    return parse_argstring(FixLoopMagics.fixloop, line)


def batch(*argv: str):
    return build_parser().parse_args(["nb.ipynb", *argv])


@pytest.mark.parametrize("name", SETTINGS)
def test_every_setting_has_one_default_and_is_a_keyword_of_fix(name):
    default = FixLoop.class_traits()[name].default()
    assert (tuple(default) if isinstance(default, list) else default) == getattr(DEFAULTS, name)
    assert inspect.signature(fix).parameters[name].default is None  # None: as configured


@pytest.mark.parametrize("name", [n for n in SETTINGS if n not in NOT_FLAGS])
def test_every_setting_is_a_flag_of_the_magic_and_of_batch_mode_under_its_own_name(name):
    for parse in (magic, batch):
        assert getattr(parse(""), name) is None  # not given: the configured value stands
        flags = {a.dest: a.option_strings for a in (build_parser()._actions if parse is batch else
                                                    FixLoopMagics.fixloop.parser._actions)}
        assert any(f.replace("no-", "").lstrip("-").replace("-", "_") == name for f in flags[name])


def test_flags_override_the_configured_values_and_share_adds_to_them():
    configured = FixLoop(share=["lookup"], max_rounds=6).options()
    line = "--max-rounds 2 --no-rules --share-policy named --share a,b --share c --timeout 12 -k 3 --wall-time 0"
    for args in (magic(line), batch(*line.split())):
        options = with_flags(configured, args).resolved()
        assert (options.max_rounds, options.rules, options.share_policy, options.timeout, options.samples,
                options.wall_time) == (2, False, "named", 12.0, 3, 0.0)
        assert options.share == ("lookup", "a", "b", "c")
    assert with_flags(configured, magic("")) == configured  # nothing given: nothing changes
    assert with_flags(configured, batch()) == configured


def test_secrets_and_kernel_modes_are_no_flags():
    assert set(NOT_FLAGS) <= set(SETTINGS)
    for name in NOT_FLAGS:
        assert not hasattr(magic(""), name) and not hasattr(batch(), name)
    with pytest.raises(SystemExit):
        batch("--gateway-token", "abc")


def test_a_bad_value_is_refused_by_the_flag():
    with pytest.raises(SystemExit):
        batch("--share-policy", "everything")
    with pytest.raises(Exception, match="invalid choice"):
        magic("--confinement nowhere")
