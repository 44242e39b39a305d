"""A unit (an assignment: the course content graded together): `model` holds what a unit
is (the manifest's schema, topics, limits), `load` reads a unit folder into one."""
