"""minitriton.options / set_options: one frozen settings object, explicit settings over the environment."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import minitriton
import minitriton.language as tl
from minitriton.options import Options, from_env


@minitriton.jit
def _count_programs(out_ptr):
    tl.atomic_add(out_ptr, 1)


def test_defaults_without_environment(monkeypatch):
    for variable in ("MINITRITON_GROUP_SIZE", "TRITON_DEBUG", "MINITRITON_SANITIZE", "TRITON_F32_DEFAULT",
                     "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "MINITRITON_AUTOTUNE"):
        monkeypatch.delenv(variable, raising=False)
    assert minitriton.options() == Options()
    assert Options().group_size is None and Options().f32_default == "tf32" and Options().autotune == "first"


def test_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        minitriton.options().group_size = 1


def test_environment_is_read(monkeypatch):
    monkeypatch.setenv("MINITRITON_GROUP_SIZE", "3")
    monkeypatch.setenv("TRITON_DEBUG", "1")
    monkeypatch.setenv("MINITRITON_SANITIZE", "true")
    monkeypatch.setenv("TRITON_F32_DEFAULT", "IEEE")
    monkeypatch.setenv("MINITRITON_AUTOTUNE", "all")
    o = minitriton.options()
    assert (o.group_size, o.debug, o.sanitize, o.f32_default, o.autotune) == (3, True, True, "ieee", "all")
    monkeypatch.setenv("TRITON_DEBUG", "0")
    monkeypatch.setenv("MINITRITON_SANITIZE", "")
    assert not minitriton.options().debug and not minitriton.options().sanitize
    assert from_env({"TRITON_DEBUG": "yes"}) == {"debug": True}


def test_explicit_setting_wins_and_none_returns_to_environment(monkeypatch):
    monkeypatch.setenv("MINITRITON_GROUP_SIZE", "3")
    with minitriton.set_options(group_size=1):
        assert minitriton.options().group_size == 1
        with minitriton.set_options(group_size=None):
            assert minitriton.options().group_size == 3
        assert minitriton.options().group_size == 1
    assert minitriton.options().group_size == 3


def test_set_options_as_a_statement_stays_until_changed():
    minitriton.set_options(sanitize=True)   # the test's autouse fixture restores it afterwards
    assert minitriton.options().sanitize
    minitriton.set_options(sanitize=None)
    assert minitriton.options().sanitize is False


def test_bad_settings_fail_before_anything_changes(monkeypatch):
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    with pytest.raises(TypeError, match="unknown option.*group_sise"):
        minitriton.set_options(group_sise=1)
    with pytest.raises(ValueError, match="group_size must be"):
        minitriton.set_options(group_size=0)
    with pytest.raises(ValueError, match="autotune must be one of first, cheapest, all"):
        minitriton.set_options(autotune="fastest")
    assert minitriton.options().group_size is None
    monkeypatch.setenv("MINITRITON_GROUP_SIZE", "many")
    with pytest.raises(ValueError, match="MINITRITON_GROUP_SIZE must be a whole number, got 'many'"):
        minitriton.options()


def test_a_launch_uses_the_group_size(monkeypatch):
    """group_size=1 runs one program per pass: the launch still counts every program once."""
    monkeypatch.delenv("MINITRITON_GROUP_SIZE", raising=False)
    for size in (None, 1, 2):
        out = np.zeros(1, np.int32)
        with minitriton.set_options(group_size=size):
            _count_programs[(5,)](out)
        assert out[0] == 5


def test_assigning_an_option_as_an_attribute_raises_and_names_set_options():
    """`minitriton.options.sanitize = True` was this project's spelling once; now it must not pass silently."""
    with pytest.raises(AttributeError, match=r"minitriton\.options\.sanitize cannot be assigned; use "
                                             r"minitriton\.set_options\(sanitize=True\)"):
        minitriton.options.sanitize = True
    assert minitriton.options().sanitize is False and minitriton.options.sanitize is False
    with pytest.raises(AttributeError, match=r"set_options\(group_size=4\)"):
        minitriton.options.group_size = 4
    with pytest.raises(AttributeError, match="set_options"):
        minitriton.options.not_an_option = 1
    with pytest.raises(AttributeError, match=r"set_options\(sanitize=None\)"):
        del minitriton.options.sanitize
    with minitriton.set_options(sanitize=True):
        assert minitriton.options.sanitize is True and minitriton.options().sanitize is True
    with pytest.raises(AttributeError, match="no setting 'sanitise'; known: "):
        minitriton.options.sanitise


def test_chosen_tells_an_explicit_or_environment_setting_from_the_default(monkeypatch):
    from minitriton.options import chosen
    monkeypatch.delenv("MINITRITON_SANITIZE", raising=False)
    assert not chosen("sanitize")
    with minitriton.set_options(sanitize=False):
        assert chosen("sanitize")
    monkeypatch.setenv("MINITRITON_SANITIZE", "0")
    assert chosen("sanitize") and minitriton.options().sanitize is False
