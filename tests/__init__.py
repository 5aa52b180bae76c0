"""The test suite (a regular package, so that a dependency shipping a top-level ``tests``
package, as ppi-python does, cannot shadow it)."""
