"""The repository's own files kept fresh from the committed results: the charts in the docs (`docs`) and every
report `nox -s docs` rebuilds (`refresh`); they read reports/ and tests/fixtures, not a user's run."""
