"""The compiled part of the package: the library crates, taking and giving JSON text exactly as
the ``fairshare`` command's ``--json`` does. Use the functions of ``fairshare`` instead."""

class InputError(ValueError):
    """An input fairshare cannot use: the message says where and what was expected."""

def policies_json() -> str:
    """Every policy of the registry, as a JSON array."""

def allocate_json(text: str, rule: str = "head-of-line") -> str:
    """The allocation of an instance (its JSON text), as ``fairshare allocate --json`` prints
    it (without the final newline)."""
