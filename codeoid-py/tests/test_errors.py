"""The exception hierarchy: every core error kind maps to its own class with its stable code."""

from __future__ import annotations

import pytest

import codeoid

# The classes the package documents, by kind name. A kind added to the core without a line here
# (and in the stubs) fails test_every_core_kind_has_a_documented_class.
DOCUMENTED = {
    "invalid_input": (codeoid.InvalidInputError, ValueError),
    "not_found": (codeoid.NotFoundError, LookupError),
    "already_exists": (codeoid.AlreadyExistsError, None),
    "database": (codeoid.DatabaseError, None),
    "busy": (codeoid.BusyError, TimeoutError),
    "corrupt": (codeoid.CorruptError, None),
    "schema_too_new": (codeoid.SchemaTooNewError, None),
    "io": (codeoid.IoError, OSError),
    "model_unavailable": (codeoid.ModelUnavailableError, None),
    "model": (codeoid.ModelError, None),
    "translation": (codeoid.TranslationError, None),
    "import": (codeoid.LogImportError, None),
    "rotation_refused": (codeoid.RotationRefusedError, None),
    "internal": (codeoid.InternalError, None),
}


def test_every_core_kind_has_a_documented_class() -> None:
    kinds = codeoid.error_kinds()
    assert [name for name, _, _ in kinds] == list(DOCUMENTED)
    codes = [code for _, code, _ in kinds]
    assert len(set(codes)) == len(codes), "codes are unique"
    for name, code, cls in kinds:
        expected, _ = DOCUMENTED[name]
        assert cls is expected
        assert cls.code == code
        assert cls.kind == name
        assert issubclass(cls, codeoid.CodeoidError)
        assert cls.__module__ == "codeoid"
        assert getattr(codeoid, cls.__name__) is cls
        assert cls.__name__ in codeoid.__all__
        assert cls.__doc__


@pytest.mark.parametrize("name", list(DOCUMENTED))
def test_each_kind_raises_its_class_with_code_and_message(name: str) -> None:
    cls, builtin = DOCUMENTED[name]
    with pytest.raises(cls) as info:
        codeoid._codeoid._raise_error(cls.code, f"a {name} failure; do the thing")
    err = info.value
    assert type(err) is cls
    assert err.code == cls.code
    assert str(err) == f"a {name} failure; do the thing"
    assert isinstance(err, codeoid.CodeoidError)
    assert isinstance(err, Exception)
    if builtin is not None:
        assert isinstance(err, builtin)


def test_root_is_an_exception_with_code_zero() -> None:
    assert issubclass(codeoid.CodeoidError, Exception)
    assert codeoid.CodeoidError.code == 0
    assert codeoid.CodeoidError.__module__ == "codeoid"


def test_codes_are_the_c_abi_codes() -> None:
    # Pinned: these numbers are part of the C ABI and never change.
    assert {name: code for name, code, _ in codeoid.error_kinds()} == {
        "invalid_input": 1,
        "not_found": 2,
        "already_exists": 3,
        "database": 4,
        "busy": 5,
        "corrupt": 6,
        "schema_too_new": 7,
        "io": 8,
        "model_unavailable": 9,
        "model": 10,
        "translation": 11,
        "import": 12,
        "rotation_refused": 13,
        "internal": 14,
    }


def test_unknown_code_is_invalid_input() -> None:
    with pytest.raises(codeoid.InvalidInputError, match="no error kind has code 999"):
        codeoid._codeoid._raise_error(999, "x")


def test_errors_can_be_caught_by_their_builtin_base() -> None:
    with pytest.raises(ValueError):
        codeoid._codeoid._raise_error(codeoid.InvalidInputError.code, "bad")
    with pytest.raises(LookupError):
        codeoid._codeoid._raise_error(codeoid.NotFoundError.code, "gone")
    with pytest.raises(OSError):
        codeoid._codeoid._raise_error(codeoid.IoError.code, "disk")
