"""Django's back-end: a filter as a `Q` (`orm.py`), over the model fields the gate proves
(`fields.py`: a rule per Django field class, the others refused by name)."""
