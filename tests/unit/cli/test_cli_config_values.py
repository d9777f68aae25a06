"""Config values that cannot work are refused when set, with the file and line when read
from a file: the real ``workbench`` command, as a person meets it."""

from __future__ import annotations


import pytest

from commands import workbench

from workbench.config.settings import SETTINGS, validate
from workbench.errors import ConfigError, ExitCode


GLOBAL = '# mine\nmodel = "echo"\n\n[tools]\ntimeout_ms = 2000\n'


@pytest.mark.parametrize("key, value, message", [
    ("tools.timeout_ms", "100000000000000000000000",
     "setting 'tools.timeout_ms' must be at most 86,400,000 ms"),
    ("tools.timeout_ms", "1e23", "'1e23' is not an integer for 'tools.timeout_ms'"),
    ("model", "", "setting 'model' must not be empty"),
    ("model", "   ", "setting 'model' must not be empty"),
    ("headless.delegate_timeout_s", "1e300", "must be at most 86,400 s"),
    ("sandbox.memory_mb", "0", "must be greater than zero"),
])
def test_a_value_that_cannot_work_is_refused_when_set(home, key, value, message):
    home.config_file.write_text(GLOBAL)
    done = workbench("config", "set", key, value)
    assert done.returncode == ExitCode.USAGE
    assert message in done.stderr
    assert home.config_file.read_text() == GLOBAL


def test_a_value_past_its_range_in_the_file_is_named_with_file_and_line(home):
    home.config_file.write_text('model = "echo"\n\n[tools]\ntimeout_ms = 100000000000000000000000\n')
    done = workbench("call", "word_count", "--args", '{"text": "a b"}')
    assert done.returncode == ExitCode.ERROR
    assert done.stderr == (f"error: {home.config_file}:4: setting 'tools.timeout_ms' must be at most "
                           "86,400,000 ms (got integer 100000000000000000000000)\n")


def test_a_byte_order_mark_before_the_config_is_passed_over(home):
    home.config_file.write_bytes("\ufeff".encode() + GLOBAL.encode())
    done = workbench("config", "get", "model")
    assert (done.returncode, done.stdout) == (0, "echo\n")
    assert workbench("config", "set", "theme", "workbench-light").returncode == 0
    assert workbench("config", "get", "tools.timeout_ms").stdout == "2000\n"
    assert "# mine" in home.config_file.read_text(encoding="utf-8-sig")


@pytest.mark.parametrize("key", [key for key, s in SETTINGS.items() if s.type in (int, float)])
def test_every_number_setting_has_a_bound_a_timer_and_an_rlimit_can_hold(key):
    with pytest.raises(ConfigError, match="must be at most"):
        validate(key, 10 ** 19)
    assert validate(key, SETTINGS[key].default) == SETTINGS[key].default
