"""A module whose import raises, for the auto-import tests: a descriptor
pickle whose module hint names it must fail with LookupError naming the
module and the error, and leave the registry unchanged."""
raise RuntimeError("this module refuses to be imported")
