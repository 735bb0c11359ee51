"""The tests that ask a reference JAX find its interpreter from the environment, and are
skipped (never failed) where there is none."""
import pytest

import reference_jax


def test_the_environment_variable_names_the_interpreter(monkeypatch, tmp_path):
  python = tmp_path / "python"
  python.write_text("")
  monkeypatch.setenv(reference_jax.ENV_VAR, str(python))
  assert reference_jax.reference_python() == str(python)


def test_a_missing_interpreter_skips_with_the_reason(monkeypatch, tmp_path):
  monkeypatch.setenv(reference_jax.ENV_VAR, str(tmp_path / "absent"))
  assert reference_jax.reference_python() is None
  with pytest.raises(pytest.skip.Exception, match=reference_jax.ENV_VAR):
    reference_jax.run_reference("print(1)")


def test_without_the_variable_or_the_fallback_the_test_is_skipped(monkeypatch, tmp_path):
  monkeypatch.delenv(reference_jax.ENV_VAR, raising=False)
  monkeypatch.setattr(reference_jax, "_FALLBACK", str(tmp_path / "absent"))
  assert reference_jax.reference_python() is None
  with pytest.raises(pytest.skip.Exception, match="not installed"):
    reference_jax.require_reference_python()
