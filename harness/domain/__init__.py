"""The domain: kernel specs, wrapping styles, pipelines and how a result is checked. Knows nothing of how cells are run."""
