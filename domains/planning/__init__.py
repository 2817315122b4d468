"""STRIPS planning domains from PDDL."""
