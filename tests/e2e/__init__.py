"""End-to-end tests in a real browser (a package, so that its conftest keeps its own name)."""
