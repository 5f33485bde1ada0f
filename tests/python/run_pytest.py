"""Runs pytest over tests/python (argv[1]); exits 77 (ctest's skip code) when pytest
or numpy is not installed for this interpreter, so a machine without them skips."""
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print("python tests skipped: %s (install python3-pytest python3-numpy)" % e)
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", sys.argv[1]]))
