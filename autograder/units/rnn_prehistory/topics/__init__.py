"""The unit's topics, one folder each (docs/AUTHORING.md). Packages only so that pytest gives
each topic's test_oracle.py and test_hidden.py a module name of its own."""
